//! The FUSE filesystem the recorder mounts: one directory holding one file, `disk.img`, whose
//! reads and writes go to a backing file in the scratch directory and whose writes and fsyncs
//! are also appended to the [`Log`].
//!
//! No writeback cache is asked for (fuser's default init), and the loop device opens the
//! file with O_DIRECT, so every write reaches the daemon when the loop device issues it.

use super::log::Log;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, FopenFlags, Generation, INodeNo, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request,
    WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The served file's name in the mount.
pub const FILE_NAME: &str = "disk.img";
const FILE_INO: INodeNo = INodeNo(2);
const TTL: Duration = Duration::from_secs(3600);

/// The daemon's state.
pub struct RecorderFs {
    /// The backing file in the scratch directory.
    pub backing: File,
    /// Its fixed size.
    pub size: u64,
    /// Where writes and flushes are logged.
    pub log: Arc<Log>,
}

fn attr(ino: INodeNo, kind: FileType, size: u64) -> FileAttr {
    let t: SystemTime = UNIX_EPOCH;
    FileAttr {
        ino,
        size,
        blocks: size.div_ceil(512),
        atime: t,
        mtime: t,
        ctime: t,
        crtime: t,
        kind,
        perm: if kind == FileType::Directory {
            0o700
        } else {
            0o600
        },
        nlink: if kind == FileType::Directory { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl RecorderFs {
    fn attr_of(&self, ino: INodeNo) -> Option<FileAttr> {
        if ino == INodeNo::ROOT {
            Some(attr(ino, FileType::Directory, 0))
        } else if ino == FILE_INO {
            Some(attr(ino, FileType::RegularFile, self.size))
        } else {
            None
        }
    }
}

fn errno(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

impl fuser::Filesystem for RecorderFs {
    fn lookup(&self, _: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent == INodeNo::ROOT && name == FILE_NAME {
            reply.entry(
                &TTL,
                &attr(FILE_INO, FileType::RegularFile, self.size),
                Generation(0),
            );
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _: &Request, ino: INodeNo, _: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr_of(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The device has a fixed size: a resize is refused, times are ignored.
        if size.is_some_and(|s| s != self.size) {
            return reply.error(Errno::EPERM);
        }
        match self.attr_of(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _: &Request, ino: INodeNo, _: OpenFlags, reply: ReplyOpen) {
        if ino == FILE_INO {
            reply.opened(FileHandle(0), FopenFlags::empty());
        } else {
            reply.error(Errno::EISDIR);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _: &Request,
        _: INodeNo,
        _: FileHandle,
        offset: u64,
        size: u32,
        _: OpenFlags,
        _: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let end = (offset + size as u64).min(self.size);
        let mut buf = vec![0u8; end.saturating_sub(offset) as usize];
        match self.backing.read_exact_at(&mut buf, offset) {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(errno(&e)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _: &Request,
        _: INodeNo,
        _: FileHandle,
        offset: u64,
        data: &[u8],
        _: WriteFlags,
        _: OpenFlags,
        _: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if offset + data.len() as u64 > self.size {
            return reply.error(Errno::ENOSPC);
        }
        match self.backing.write_all_at(data, offset) {
            Ok(()) => {
                self.log.write(offset, data);
                reply.written(data.len() as u32);
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn flush(&self, _: &Request, _: INodeNo, _: FileHandle, _: LockOwner, reply: ReplyEmpty) {
        // close(): not a durability request.
        reply.ok();
    }

    fn fsync(&self, _: &Request, _: INodeNo, _: FileHandle, _: bool, reply: ReplyEmpty) {
        // The backing file is scratch: what is durable is what the log says, so no real fsync.
        self.log.flush();
        reply.ok();
    }

    fn opendir(&self, _: &Request, ino: INodeNo, _: OpenFlags, reply: ReplyOpen) {
        if ino == INodeNo::ROOT {
            reply.opened(FileHandle(0), FopenFlags::empty());
        } else {
            reply.error(Errno::ENOTDIR);
        }
    }

    fn readdir(
        &self,
        _: &Request,
        ino: INodeNo,
        _: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (FILE_INO, FileType::RegularFile, FILE_NAME),
        ];
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn access(&self, _: &Request, _: INodeNo, _: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }
}
