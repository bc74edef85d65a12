//! A private PostgreSQL server on the filesystem under test: find the binaries, `initdb`, start,
//! wait until it accepts connections, stop.
//!
//! PostgreSQL refuses to run as root, so when fsbench is root every server-side command
//! (`initdb`, `postgres`, `pg_ctl`) runs as the `postgres` system user the Debian package
//! creates: std's `CommandExt::uid`/`gid` (setgroups, setgid, setuid in the child before exec).
//! No `runuser`, so nothing depends on PAM. The data directory is `chown`ed to that user.
//! Clients (`pgbench`, `psql`, `pg_isready`) run as fsbench itself and connect as the database
//! superuser `postgres` over the private socket (trust authentication: the socket directory is
//! mode 0700 and owned by the server user, so nobody else can reach it).
//!
//! [`PgServer`] owns the running server from start to stop, like the mount guard owns a mount:
//! it is stopped (`pg_ctl stop -m fast`, then the postmaster is reaped) on success, error, panic
//! and Ctrl-C. The postmaster runs in its own process group, so a terminal's Ctrl-C reaches
//! fsbench and not the server, and fsbench shuts it down in order; its parent-death signal is
//! SIGINT (PostgreSQL's fast shutdown), the last resort when fsbench itself is killed.

use crate::host::command::{self, OnCancel};
use crate::{Error, Result};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Programs fsbench needs from the PostgreSQL installation.
const TOOLS: &[&str] = &[
    "postgres",
    "initdb",
    "pg_ctl",
    "pg_isready",
    "pgbench",
    "psql",
];

/// Environment variable naming the directory of the PostgreSQL programs.
pub const BINDIR_ENV: &str = "FSBENCH_PG_BINDIR";

/// Where the PostgreSQL programs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// Directory holding `postgres`, `initdb`, `pgbench`…
    pub bindir: PathBuf,
}

impl Binaries {
    /// `$FSBENCH_PG_BINDIR` when set (a server built elsewhere, `/usr/local/pgsql/bin`), else
    /// `pg_config --bindir` when it holds the server, else the newest `/usr/lib/postgresql/*/bin`
    /// (Debian keeps the server off PATH). `Err` says what is missing.
    pub fn find() -> std::result::Result<Binaries, String> {
        if let Some(dir) = std::env::var_os(BINDIR_ENV) {
            let dir = PathBuf::from(dir);
            return match TOOLS.iter().find(|t| !dir.join(t).is_file()) {
                None => Ok(Binaries { bindir: dir }),
                Some(t) => Err(format!(
                    "no PostgreSQL server: {BINDIR_ENV}={} has no {t}",
                    dir.display()
                )),
            };
        }
        let mut candidates = Vec::new();
        if let Ok(out) = Command::new("pg_config")
            .arg("--bindir")
            .stdin(Stdio::null())
            .output()
            && out.status.success()
        {
            candidates.push(PathBuf::from(
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
            ));
        }
        let mut versioned: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let v: u32 = e.file_name().to_str()?.parse().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        versioned.sort_by_key(|v| std::cmp::Reverse(v.0));
        candidates.extend(versioned.into_iter().map(|(_, p)| p));
        candidates
            .into_iter()
            .find(|d| TOOLS.iter().all(|t| d.join(t).is_file()))
            .map(|bindir| Binaries { bindir })
            .ok_or_else(|| {
                "no PostgreSQL server found (postgres, initdb, pg_ctl, pgbench, psql in \
                 `pg_config --bindir` or /usr/lib/postgresql/*/bin); install the postgresql package"
                    .to_string()
            })
    }

    /// Full path of one program.
    pub fn path(&self, tool: &str) -> PathBuf {
        self.bindir.join(tool)
    }
}

/// The unprivileged account the server runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerUser {
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
}

/// The account for server commands: the `postgres` user when fsbench is root, `None` (fsbench's
/// own account) otherwise. `Err` when root and there is no `postgres` user.
pub fn server_user() -> std::result::Result<Option<ServerUser>, String> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let Some((uid, gid)) = crate::host::sys::user::user_ids(c"postgres") else {
        return Err(
            "PostgreSQL refuses to run as root and there is no `postgres` user to run it as \
             (the postgresql package creates one)"
                .into(),
        );
    };
    Ok(Some(ServerUser { uid, gid }))
}

/// How the server is configured beyond what `initdb` writes.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// `shared_buffers`, bytes.
    pub shared_buffers: u64,
    /// Further `name = value` settings from the plan, passed with `-c`.
    pub extra: Vec<(String, String)>,
    /// Longest wait for start-up and for shutdown.
    pub timeout: Duration,
}

/// Settings fsbench always sets. Durability is on, as a database in production runs; the
/// server listens on its private unix socket only.
fn fixed_settings(port: u16, socket_dir: &Path, shared_buffers: u64) -> Vec<(String, String)> {
    [
        ("listen_addresses", String::new()),
        ("port", port.to_string()),
        ("unix_socket_directories", socket_dir.display().to_string()),
        ("fsync", "on".into()),
        ("synchronous_commit", "on".into()),
        ("full_page_writes", "on".into()),
        ("shared_buffers", format!("{}kB", shared_buffers / 1024)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Settings a plan may not override: they are what keeps the server private.
pub const RESERVED: &[&str] = &["listen_addresses", "port", "unix_socket_directories"];

/// A command for the server side: run as `user`, from `/` (root's cwd may be unreadable for
/// the server user), with the PG* variables that could redirect it removed.
fn server_command(program: &Path, user: Option<ServerUser>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir("/").env("LC_ALL", "C");
    for v in [
        "PGDATA",
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGOPTIONS",
    ] {
        cmd.env_remove(v);
    }
    if let Some(u) = user {
        cmd.uid(u.uid).gid(u.gid);
    }
    cmd
}

/// Give `path` to the server user (no-op when fsbench is not root).
fn chown(path: &Path, user: Option<ServerUser>) -> Result<()> {
    if let Some(u) = user {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .map_err(|e| Error::io("cannot chown", path, e))?;
    }
    Ok(())
}

/// Create the cluster in `data_dir` (which must not exist yet): `initdb` with trust
/// authentication, C locale, UTF-8, and durable writes (no `--no-sync`).
pub fn init_cluster(
    bins: &Binaries,
    user: Option<ServerUser>,
    data_dir: &Path,
    timeout: Duration,
) -> Result<()> {
    std::fs::create_dir(data_dir).map_err(|e| Error::io("cannot create", data_dir, e))?;
    std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io("cannot chmod", data_dir, e))?;
    chown(data_dir, user)?;
    let mut cmd = server_command(&bins.path("initdb"), user);
    cmd.arg("-D")
        .arg(data_dir)
        .args(["--auth=trust", "--username=postgres", "--encoding=UTF8"])
        .args(["--locale=C"]);
    let shown = format!("initdb -D {}", data_dir.display());
    let out = command::run_child(&mut cmd, &shown, timeout, OnCancel::Wait)?;
    if out.status != Some(0) {
        return Err(Error::tool(shown, tail(&out.combined(), 10)));
    }
    crate::cancel::check()
}

/// A running private server. Dropping it stops the server and removes the socket directory.
#[derive(Debug)]
pub struct PgServer {
    bins: Binaries,
    user: Option<ServerUser>,
    data_dir: PathBuf,
    /// Private directory for the unix socket and the server log, off the filesystem under test.
    socket_dir: tempfile::TempDir,
    port: u16,
    postmaster: Option<Child>,
    timeout: Duration,
    /// Ledger entry of the postmaster (pid + start time; best effort, as for a daemon), so the
    /// next fsbench stops a server a SIGKILLed one left running before it unmounts its data.
    _held: Option<crate::host::ledger::Held>,
}

impl PgServer {
    /// Start the server on `data_dir` and wait until it accepts connections. When it does not
    /// come up, the error carries the last lines of its log.
    pub fn start(
        bins: &Binaries,
        user: Option<ServerUser>,
        data_dir: &Path,
        config: &ServerConfig,
    ) -> Result<PgServer> {
        let socket_dir = tempfile::Builder::new()
            .prefix("fsbench-pg-")
            .tempdir()
            .map_err(|e| Error::io("cannot create", std::env::temp_dir(), e))?;
        std::fs::set_permissions(socket_dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io("cannot chmod", socket_dir.path(), e))?;
        chown(socket_dir.path(), user)?;
        let port = free_port();
        let log_path = socket_dir.path().join("server.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| Error::io("cannot create", &log_path, e))?;
        let log2 = log
            .try_clone()
            .map_err(|e| Error::io("cannot duplicate", &log_path, e))?;
        let mut cmd = server_command(&bins.path("postgres"), user);
        cmd.arg("-D").arg(data_dir);
        for (k, v) in fixed_settings(port, socket_dir.path(), config.shared_buffers)
            .iter()
            .chain(&config.extra)
        {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        cmd.stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0);
        // After setuid (which would clear the parent-death signal), before exec.
        crate::host::sys::spawn::interrupt_when_parent_dies(&mut cmd);
        let child = cmd.spawn().map_err(|e| {
            Error::tool(
                format!("{}", bins.path("postgres").display()),
                e.to_string(),
            )
        })?;
        let held = crate::host::ledger::start_time_of(child.id()).and_then(|start_time| {
            crate::host::ledger::hold(crate::host::ledger::Item::Process {
                pid: child.id(),
                start_time,
                name: "postgres".into(),
                data_dir: None,
            })
            .ok()
        });
        let mut server = PgServer {
            bins: bins.clone(),
            user,
            data_dir: data_dir.to_path_buf(),
            socket_dir,
            port,
            postmaster: Some(child),
            timeout: config.timeout,
            _held: held,
        };
        server.wait_ready()?;
        Ok(server)
    }

    /// Poll `pg_isready` until the server accepts connections; fail early when the postmaster
    /// exits, and after the timeout.
    fn wait_ready(&mut self) -> Result<()> {
        let start = Instant::now();
        loop {
            crate::cancel::check()?;
            if let Some(child) = self.postmaster.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.postmaster = None;
                return Err(Error::tool(
                    "postgres",
                    format!(
                        "the server exited during start-up ({status}); its log says:\n{}",
                        self.log_tail(12)
                    ),
                ));
            }
            let mut cmd = Command::new(self.bins.path("pg_isready"));
            cmd.args(self.connect_args()).args(["-t", "1"]);
            let ready = command::run_child(
                &mut cmd,
                "pg_isready",
                Duration::from_secs(5),
                OnCancel::Kill,
            )?;
            if ready.status == Some(0) {
                return Ok(());
            }
            if start.elapsed() > self.timeout {
                return Err(Error::tool(
                    "postgres",
                    format!(
                        "did not accept connections within {:.0} s; its log says:\n{}",
                        self.timeout.as_secs_f64(),
                        self.log_tail(12)
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `-h SOCKET_DIR -p PORT -U postgres`, for every client program.
    pub fn connect_args(&self) -> Vec<String> {
        vec![
            "-h".into(),
            self.socket_dir.path().display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-U".into(),
            "postgres".into(),
        ]
    }

    /// An in-process client (the `postgres` crate) over the private socket, as the database
    /// superuser, for a caller that must see each statement's result as it returns (the crash
    /// oracle marks each COMMIT's acknowledgement).
    pub fn connect(&self) -> Result<postgres::Client> {
        postgres::Config::new()
            .host_path(self.socket_dir.path())
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect_timeout(self.timeout)
            .connect(postgres::NoTls)
            .map_err(|e| Error::tool("postgres (client)", client_error(&e)))
    }

    /// A client program (`pgbench`, `psql`) with the connection arguments set, run as fsbench.
    pub fn client(&self, tool: &str) -> Command {
        let mut cmd = Command::new(self.bins.path(tool));
        cmd.args(self.connect_args()).env("LC_ALL", "C");
        cmd
    }

    /// Private scratch directory off the filesystem under test (pgbench's `--log` files go here
    /// so that logging does not add I/O to the device being measured).
    pub fn scratch_dir(&self) -> &Path {
        self.socket_dir.path()
    }

    /// The postmaster's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.postmaster.as_ref().map(Child::id)
    }

    /// Run one SQL statement with psql and return its unaligned, tuples-only output.
    pub fn sql(&self, statement: &str) -> Result<String> {
        let mut cmd = self.client("psql");
        cmd.args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            "postgres",
            "-c",
        ])
        .arg(statement);
        let shown = format!("psql -c '{statement}'");
        let out = command::run_child(&mut cmd, &shown, self.timeout, OnCancel::Kill)?;
        if out.status != Some(0) {
            return Err(Error::tool(shown, out.combined().trim().to_string()));
        }
        Ok(out.stdout.trim().to_string())
    }

    /// The last `n` lines of the server log.
    pub fn log_tail(&self, n: usize) -> String {
        let text =
            std::fs::read_to_string(self.socket_dir.path().join("server.log")).unwrap_or_default();
        tail(&text, n)
    }

    /// Stop the server (`pg_ctl stop -m fast`) and wait until the postmaster is gone.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let Some(mut child) = self.postmaster.take() else {
            return Ok(());
        };
        if let Ok(Some(_)) = child.try_wait() {
            return Ok(());
        }
        let mut cmd = server_command(&self.bins.path("pg_ctl"), self.user);
        cmd.arg("stop")
            .arg("-D")
            .arg(&self.data_dir)
            .args(["-m", "fast", "-w", "-t"])
            .arg(self.timeout.as_secs().max(1).to_string());
        let stopped = command::run_child(
            &mut cmd,
            "pg_ctl stop -m fast",
            self.timeout + Duration::from_secs(10),
            OnCancel::Wait,
        );
        let pid = child.id() as libc::pid_t;
        // pg_ctl waits for postmaster.pid to go; the postmaster is our child, so reap it too.
        // Whatever pg_ctl said, a postmaster that is gone is what matters.
        drop(stopped);
        if wait_exit(&mut child, Duration::from_secs(30)) {
            return Ok(());
        }
        // Fast shutdown did not finish: immediate shutdown, then kill the whole group.
        // Our own unreaped child, and its process group (it leads it).
        crate::host::sys::signal(pid, rustix::process::Signal::QUIT);
        if !wait_exit(&mut child, Duration::from_secs(10)) {
            crate::host::sys::signal(-pid, rustix::process::Signal::KILL);
            let _ = child.wait();
        }
        Err(Error::tool(
            "pg_ctl stop -m fast",
            format!(
                "the server did not stop within {:.0} s and was killed; its log says:\n{}",
                self.timeout.as_secs_f64() + 30.0,
                self.log_tail(8)
            ),
        ))
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            eprintln!("fsbench: warning: {e}");
        }
    }
}

/// Wait up to `limit` for `child` to exit; true when it did.
fn wait_exit(child: &mut Child, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A port number nobody is listening on: the server listens on no TCP port at all, but the
/// number names its socket (`.s.PGSQL.PORT`) and keys its System V shared memory, so one that
/// is free machine-wide keeps it apart from any other server.
fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54_329)
}

/// A client error in words: the server's own message when there is one (the crate's Display
/// says only "db error").
pub fn client_error(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// The last `n` non-empty lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_settings_keep_the_server_private_and_durable() {
        let s = fixed_settings(5555, Path::new("/tmp/x"), 32 << 20);
        let get = |k: &str| s.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("listen_addresses"), Some(""));
        assert_eq!(get("unix_socket_directories"), Some("/tmp/x"));
        assert_eq!(get("port"), Some("5555"));
        assert_eq!(get("fsync"), Some("on"));
        assert_eq!(get("synchronous_commit"), Some("on"));
        assert_eq!(get("full_page_writes"), Some("on"));
        assert_eq!(get("shared_buffers"), Some("32768kB"));
        for r in RESERVED {
            assert!(get(r).is_some(), "{r} is reserved but not set");
        }
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
        assert_ne!(free_port(), 0);
    }
}
