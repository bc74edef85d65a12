//! A counting VFS: SQLite's own `unix` VFS with its `xSync` counted.
//!
//! No file is wrapped: [`open`] lets the real `unix` xOpen fill the file in place, then points
//! the file at a copy of its method table whose `xSync` and `xClose` count and forward to the
//! originals. Every other method, and every VFS method, is SQLite's own. So the I/O is exactly
//! what SQLite does on its default VFS, and the count is exactly its sync calls (each is one
//! `fsync`/`fdatasync` of that file).
//!
//! SQLite's unix VFS also fsyncs the *directory* on the first sync of a journal or WAL file it
//! has just created (`UNIXFILE_DIRSYNC` in os_unix.c). That happens inside `xSync`, out of a
//! shim's sight, so [`Counts::dir_syncs`] infers it by the same rule: the first sync of a handle
//! opened with `SQLITE_OPEN_CREATE` as a main journal, super-journal or WAL.

// `unsafe` outside host::sys, an allowed exception (docs/ARCHITECTURE.md): SQLite's VFS is a table
// of `extern "C"` callbacks.

use rusqlite::ffi;
use std::collections::HashSet;
use std::ffi::{CStr, c_char, c_int};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Name the counting VFS is registered under.
pub const NAME: &CStr = c"fsbench-count";

static SYNCS: AtomicU64 = AtomicU64::new(0);
static DIR_SYNCS: AtomicU64 = AtomicU64::new(0);

/// The real `unix` VFS (address kept as usize so the static is Sync).
static REAL: OnceLock<usize> = OnceLock::new();

/// One copied method table: addresses of the original and of our copy, and the original
/// xSync and xClose our copy forwards to.
#[derive(Clone, Copy)]
struct Table {
    orig: usize,
    copy: usize,
    sync: unsafe extern "C" fn(*mut ffi::sqlite3_file, c_int) -> c_int,
    close: unsafe extern "C" fn(*mut ffi::sqlite3_file) -> c_int,
}
static TABLES: Mutex<Vec<Table>> = Mutex::new(Vec::new());
/// Open handles whose first sync also syncs their directory.
static DIRSYNC_PENDING: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

/// Sync calls counted since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// `xSync` calls: fsync/fdatasync of a database, journal or WAL file.
    pub syncs: u64,
    /// Directory fsyncs the unix VFS does after creating a journal or WAL (inferred, see above).
    pub dir_syncs: u64,
}

impl Counts {
    /// Counts now.
    pub fn now() -> Counts {
        Counts {
            syncs: SYNCS.load(Ordering::Relaxed),
            dir_syncs: DIR_SYNCS.load(Ordering::Relaxed),
        }
    }

    /// Counts from `self` (earlier) to `later`.
    pub fn until(&self, later: &Counts) -> Counts {
        Counts {
            syncs: later.syncs - self.syncs,
            dir_syncs: later.dir_syncs - self.dir_syncs,
        }
    }
}

/// Register the counting VFS (once per process; not as the default).
pub fn register() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find only reads SQLite's VFS list; the copy we register is
        // leaked, so it lives as long as the process, as SQLite requires.
        unsafe {
            let real = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if real.is_null() {
                return Err("this SQLite has no unix VFS".into());
            }
            REAL.set(real as usize).ok();
            let mut ours: ffi::sqlite3_vfs = *real;
            ours.zName = NAME.as_ptr();
            ours.pNext = std::ptr::null_mut();
            ours.xOpen = Some(open);
            let rc = ffi::sqlite3_vfs_register(Box::into_raw(Box::new(ours)), 0);
            if rc != ffi::SQLITE_OK {
                return Err(format!("sqlite3_vfs_register failed ({rc})"));
            }
        }
        Ok(())
    })
    .clone()
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real = *REAL.get().expect("registered") as *mut ffi::sqlite3_vfs;
    // SAFETY: `file` has room for the real VFS's szOsFile (ours copies it); the real xOpen is
    // called with the real VFS as SQLite would.
    unsafe {
        let rc = ((*real).xOpen.expect("unix xOpen"))(real, name, file, flags, out_flags);
        if rc != ffi::SQLITE_OK || (*file).pMethods.is_null() {
            return rc;
        }
        (*file).pMethods = counting_table((*file).pMethods);
        let journal = ffi::SQLITE_OPEN_MAIN_JOURNAL | ffi::SQLITE_OPEN_SUPER_JOURNAL;
        if flags & ffi::SQLITE_OPEN_CREATE != 0
            && (flags & journal != 0 || flags & ffi::SQLITE_OPEN_WAL != 0)
        {
            pending()
                .get_or_insert_with(HashSet::new)
                .insert(file as usize);
        }
        rc
    }
}

fn pending() -> std::sync::MutexGuard<'static, Option<HashSet<usize>>> {
    DIRSYNC_PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Our copy of `orig` (made once per original table and leaked).
///
/// # Safety
/// `orig` must be a live method table of the unix VFS (they are static).
unsafe fn counting_table(orig: *const ffi::sqlite3_io_methods) -> *const ffi::sqlite3_io_methods {
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = tables.iter().find(|t| t.orig == orig as usize) {
        return t.copy as *const ffi::sqlite3_io_methods;
    }
    // SAFETY: see the function's contract.
    let o = unsafe { &*orig };
    let (Some(sync), Some(close)) = (o.xSync, o.xClose) else {
        return orig;
    };
    let mut copy = *o;
    copy.xSync = Some(counting_sync);
    copy.xClose = Some(counting_close);
    let addr = Box::into_raw(Box::new(copy)) as usize;
    tables.push(Table {
        orig: orig as usize,
        copy: addr,
        sync,
        close,
    });
    addr as *const ffi::sqlite3_io_methods
}

/// The originals behind the table `file` points at.
fn originals(file: *mut ffi::sqlite3_file) -> Option<Table> {
    // SAFETY: SQLite passes a file it opened through `open`, whose pMethods is one of ours.
    let table = unsafe { (*file).pMethods } as usize;
    TABLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|t| t.copy == table)
        .copied()
}

unsafe extern "C" fn counting_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let Some(Table { sync, .. }) = originals(file) else {
        return ffi::SQLITE_IOERR_FSYNC;
    };
    SYNCS.fetch_add(1, Ordering::Relaxed);
    if pending()
        .as_mut()
        .is_some_and(|p| p.remove(&(file as usize)))
    {
        DIR_SYNCS.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: forwarding to the unix VFS's own xSync with the file it filled in.
    unsafe { sync(file, flags) }
}

unsafe extern "C" fn counting_close(file: *mut ffi::sqlite3_file) -> c_int {
    let Some(Table { close, .. }) = originals(file) else {
        return ffi::SQLITE_IOERR_CLOSE;
    };
    if let Some(p) = pending().as_mut() {
        p.remove(&(file as usize));
    }
    // SAFETY: forwarding to the unix VFS's own xClose.
    unsafe { close(file) }
}
