//! Where the history store is, and how a PostgreSQL store gets its password without it ever
//! being in argv, a file fsbench writes, a row or a log line.
//!
//! Order: `--store URL` (refused when it carries a password: argv is visible in `ps`), else
//! `FSBENCH_STORE` (`off` disables recording), else the default SQLite file. For PostgreSQL,
//! what the URL leaves out comes from `PGSERVICE` (the libpq service file), then `PGHOST`,
//! `PGPORT`, `PGUSER`, `PGDATABASE`; the password from `--store-password-file`, else
//! `PGPASSWORD`, else `~/.pgpass` (`PGPASSFILE`), as libpq does.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Environment variable naming the store (a SQLite path or `postgresql://…`; `off`: none).
pub const STORE_ENV: &str = "FSBENCH_STORE";

/// A resolved store location.
#[derive(Clone)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    Postgres(Box<PgTarget>),
}

/// A PostgreSQL connection, complete with its password (kept out of `Debug` and messages).
#[derive(Clone)]
pub struct PgTarget {
    /// The parsed connection settings, password included.
    pub config: postgres::Config,
    /// The URL as given, password removed: what messages show.
    pub shown: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The config's own Debug would print the password.
        f.write_str(&self.shown)
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl Location {
    /// The location as messages show it (never a password).
    pub fn shown(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(t) => t.shown.clone(),
        }
    }

    /// The store from the flags and the environment; `None` when recording is switched off
    /// (`FSBENCH_STORE=off`). Bad input is exit 2.
    pub fn resolve(flag: Option<&str>, password_file: Option<&Path>) -> Result<Option<Location>> {
        let (spec, from_argv) = match flag {
            Some(s) => (s.to_string(), true),
            None => match std::env::var(STORE_ENV) {
                Ok(s) if !s.trim().is_empty() => (s, false),
                _ => return Ok(Some(Location::Sqlite(default_sqlite()?))),
            },
        };
        let spec = spec.trim().to_string();
        if matches!(spec.as_str(), "off" | "none") {
            return Ok(None);
        }
        if is_postgres(&spec) {
            return postgres_target(&spec, from_argv, password_file)
                .map(|t| Some(Location::Postgres(Box::new(t))));
        }
        if password_file.is_some() {
            return Err(Error::invalid(
                "--store-password-file",
                "is for a PostgreSQL store (postgresql://…); a SQLite store has no password",
            ));
        }
        let path = spec.strip_prefix("sqlite://").unwrap_or(&spec);
        Ok(Some(Location::Sqlite(PathBuf::from(path))))
    }
}

/// Whether a store spec names PostgreSQL.
pub fn is_postgres(spec: &str) -> bool {
    spec.starts_with("postgresql://") || spec.starts_with("postgres://")
}

/// The default SQLite file: `/var/lib/fsbench/history.db` for root, else
/// `$XDG_DATA_HOME/fsbench/history.db` (`~/.local/share/fsbench/history.db`).
pub fn default_sqlite() -> Result<PathBuf> {
    if rustix::process::geteuid().is_root() {
        return Ok(PathBuf::from("/var/lib/fsbench/history.db"));
    }
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local/share"),
            None => {
                return Err(Error::invalid(
                    "--store",
                    "neither XDG_DATA_HOME nor HOME is set; name a store with --store PATH",
                ));
            }
        },
    };
    Ok(base.join("fsbench/history.db"))
}

/// `spec` with any password taken out: `postgresql://u:pw@h/db` → `postgresql://u@h/db`,
/// and a `password=` parameter dropped.
pub fn redact(spec: &str) -> String {
    let mut s = spec.to_string();
    if let Some(scheme_end) = s.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end = s[rest_start..]
            .find(['/', '?'])
            .map_or(s.len(), |i| rest_start + i);
        if let Some(at) = s[rest_start..authority_end].rfind('@') {
            let userinfo = &s[rest_start..rest_start + at];
            if let Some(colon) = userinfo.find(':') {
                s.replace_range(rest_start + colon..rest_start + at, "");
            }
        }
    }
    if let Some(q) = s.find('?') {
        let (head, query) = s.split_at(q + 1);
        let kept: Vec<&str> = query
            .split('&')
            .filter(|kv| !kv.to_ascii_lowercase().starts_with("password="))
            .collect();
        let mut out = head.to_string() + &kept.join("&");
        if out.ends_with('?') {
            out.pop();
        }
        return out;
    }
    s
}

/// Parse a PostgreSQL URL and complete it from the libpq environment.
fn postgres_target(spec: &str, from_argv: bool, password_file: Option<&Path>) -> Result<PgTarget> {
    let shown = redact(spec);
    let flag = if from_argv { "--store" } else { STORE_ENV };
    // `service=NAME` is libpq's; the postgres crate does not know it, so it is taken out here.
    let (url, service) = take_param(spec, "service");
    let mut config: postgres::Config = url.parse().map_err(|e| {
        Error::invalid(
            flag,
            format!("{shown} is not a PostgreSQL URL the client understands: {e}"),
        )
    })?;
    if from_argv && config.get_password().is_some() {
        return Err(Error::invalid(
            "--store",
            "the URL carries a password, which every user of this machine could read in `ps`; \
             take it out and use PGPASSWORD, ~/.pgpass, PGSERVICE or --store-password-file",
        ));
    }
    let service = service.or_else(|| std::env::var("PGSERVICE").ok().filter(|s| !s.is_empty()));
    let mut from_service = std::collections::BTreeMap::new();
    if let Some(name) = &service {
        from_service = service_params(name)?;
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let pick = |key: &str, envvar: &str| from_service.get(key).cloned().or_else(|| env(envvar));
    if config.get_hosts().is_empty() {
        let host = pick("host", "PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
        if host.starts_with('/') {
            config.host_path(&host);
        } else {
            config.host(&host);
        }
    }
    if config.get_ports().is_empty()
        && let Some(p) = pick("port", "PGPORT")
    {
        let port: u16 = p.parse().map_err(|_| {
            Error::invalid(
                flag,
                format!("port {p:?} (from PGPORT or the service) is not a number"),
            )
        })?;
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = pick("user", "PGUSER")
            .or_else(current_user)
            .ok_or_else(|| {
                Error::invalid(
                    flag,
                    format!("{shown} names no user; add user@ or set PGUSER"),
                )
            })?;
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        let db = pick("dbname", "PGDATABASE")
            .unwrap_or_else(|| config.get_user().unwrap_or_default().to_string());
        config.dbname(&db);
    }
    if config.get_password().is_none() {
        let password = match password_file {
            Some(f) => Some(read_password_file(f)?),
            None => from_service
                .get("password")
                .cloned()
                .or_else(|| env("PGPASSWORD"))
                .or_else(|| pgpass_lookup(&config)),
        };
        if let Some(p) = password {
            config.password(p);
        }
    }
    config.application_name("fsbench history");
    config.connect_timeout(std::time::Duration::from_secs(10));
    Ok(PgTarget { config, shown })
}

/// The account name of this process (libpq's default user).
fn current_user() -> Option<String> {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            let uid = rustix::process::getuid().as_raw();
            let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
            passwd.lines().find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() > 2 && f[2] == uid.to_string()).then(|| f[0].to_string())
            })
        })
}

/// `spec` without the query parameter `key`, and its value.
fn take_param(spec: &str, key: &str) -> (String, Option<String>) {
    let Some(q) = spec.find('?') else {
        return (spec.to_string(), None);
    };
    let (head, query) = (&spec[..q], &spec[q + 1..]);
    let mut value = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.split_once('=') {
            Some((k, v)) if k == key => {
                value = Some(v.to_string());
                false
            }
            _ => true,
        })
        .collect();
    let url = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    (url, value)
}

/// The first line of a password file.
fn read_password_file(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("cannot read --store-password-file", path, e))?;
    let line = text.lines().next().unwrap_or("").to_string();
    if line.is_empty() {
        return Err(Error::invalid(
            "--store-password-file",
            format!(
                "{} is empty; its first line is the password",
                path.display()
            ),
        ));
    }
    Ok(line)
}

/// The parameters of service `name` from `PGSERVICEFILE` or `~/.pg_service.conf`, else
/// `PGSYSCONFDIR/pg_service.conf` (`/etc/postgresql-common/pg_service.conf`).
fn service_params(name: &str) -> Result<std::collections::BTreeMap<String, String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(f) = std::env::var_os("PGSERVICEFILE") {
        files.push(f.into());
    } else if let Some(h) = std::env::var_os("HOME") {
        files.push(PathBuf::from(h).join(".pg_service.conf"));
    }
    let sysconf = std::env::var_os("PGSYSCONFDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/postgresql-common"));
    files.push(sysconf.join("pg_service.conf"));
    for f in &files {
        if let Ok(text) = std::fs::read_to_string(f)
            && let Some(p) = parse_service(&text, name)
        {
            return Ok(p);
        }
    }
    Err(Error::invalid(
        "PGSERVICE",
        format!(
            "no service [{name}] in {}",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    ))
}

/// Section `[name]` of a pg_service.conf.
pub fn parse_service(text: &str, name: &str) -> Option<std::collections::BTreeMap<String, String>> {
    let mut found = None;
    let mut current = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(sec) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = sec.trim() == name;
            if current {
                found.get_or_insert_with(std::collections::BTreeMap::new);
            }
            continue;
        }
        if current && let Some((k, v)) = line.split_once('=') {
            found
                .get_or_insert_with(std::collections::BTreeMap::new)
                .insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    found
}

/// The password ~/.pgpass (or `PGPASSFILE`) holds for this connection. Like libpq, a file
/// others can read is ignored (with a warning).
fn pgpass_lookup(config: &postgres::Config) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&file).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "fsbench: warning: {} is readable by others and is ignored (chmod 0600 it)",
            file.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let db = config.get_dbname().unwrap_or_default();
    let user = config.get_user().unwrap_or_default();
    pgpass_match(&text, &host, &port, db, user)
}

/// The password of the first `host:port:database:user:password` line that matches (`*`
/// matches anything; a socket directory also matches `localhost`, as in libpq).
pub fn pgpass_match(text: &str, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        let host_ok = fields[0] == "*"
            || fields[0] == host
            || (host.starts_with('/') && fields[0] == "localhost");
        let ok = |f: &str, v: &str| f == "*" || f == v;
        if host_ok && ok(&fields[1], port) && ok(&fields[2], db) && ok(&fields[3], user) {
            return Some(fields[4].clone());
        }
    }
    None
}

/// Split a .pgpass line on unescaped `:` (`\:` and `\\` are escapes).
fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().unwrap().push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_removes_the_password_everywhere() {
        assert_eq!(
            redact("postgresql://bob:s3cret@db.example:5432/fsb"),
            "postgresql://bob@db.example:5432/fsb"
        );
        assert_eq!(
            redact("postgresql://bob@/fsb?host=/tmp/x&password=s3cret&port=5"),
            "postgresql://bob@/fsb?host=/tmp/x&port=5"
        );
        assert_eq!(redact("postgresql:///fsb?password=x"), "postgresql:///fsb");
        assert_eq!(
            redact("/var/lib/fsbench/history.db"),
            "/var/lib/fsbench/history.db"
        );
    }

    #[test]
    fn a_password_on_the_command_line_is_refused() {
        let e = postgres_target("postgresql://bob:pw@localhost/fsb", true, None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(!e.to_string().contains("pw@"), "{e}");
        assert!(e.to_string().contains("PGPASSWORD"), "{e}");
    }

    #[test]
    fn pgpass_lines_match_like_libpq() {
        let text = "# comment\nother:5432:*:bob:no\n*:5433:fsb:bob:yes\\:colon\n";
        assert_eq!(
            pgpass_match(text, "/tmp/s", "5433", "fsb", "bob").as_deref(),
            Some("yes:colon")
        );
        assert_eq!(pgpass_match(text, "/tmp/s", "5432", "fsb", "bob"), None);
        assert_eq!(
            pgpass_match("localhost:*:*:*:sock\n", "/run/pg", "1", "d", "u").as_deref(),
            Some("sock")
        );
    }

    #[test]
    fn service_sections_are_read() {
        let text = "[a]\nhost=h1\n[fsb]\nhost = /tmp/s\nport=5433\n";
        let p = parse_service(text, "fsb").unwrap();
        assert_eq!(p["host"], "/tmp/s");
        assert_eq!(p["port"], "5433");
        assert!(parse_service(text, "zzz").is_none());
    }

    #[test]
    fn service_param_is_taken_out_of_the_url() {
        let (u, s) = take_param("postgresql:///db?service=fsb&port=1", "service");
        assert_eq!(u, "postgresql:///db?port=1");
        assert_eq!(s.as_deref(), Some("fsb"));
    }
}
