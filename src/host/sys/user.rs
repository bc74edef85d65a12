//! Accounts: a user's ids by name (PostgreSQL's server runs as `postgres` when fsbench is root).

/// The uid and primary gid of user `name`, `None` when there is no such user.
pub fn user_ids(name: &std::ffi::CStr) -> Option<(u32, u32)> {
    let mut pw: libc::passwd = empty_passwd();
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: getpwnam_r (thread-safe) fills `pw` with strings in `buf`, both ours and sized
    // as passed; `found` is set to `&pw` or NULL. Only the two integers are read.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

fn empty_passwd() -> libc::passwd {
    // SAFETY: passwd is plain data (integers and pointers); all-zero is a valid "empty" value.
    unsafe { std::mem::zeroed() }
}
