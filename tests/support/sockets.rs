//! A running toolhost's own sockets, seen from a test: for what no client
//! can observe from its end of a connection (the server's socket options).

use std::net::{SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, RawFd};

/// A copy of the socket process `pid` holds for the TCP connection whose
/// server end is `server` and client end is `client`, taken with
/// `pidfd_getfd` (Linux 5.6 and later; a test may take the descriptors of
/// the processes it started). Panics, saying why, when it cannot.
pub fn peer_socket_of(pid: u32, server: SocketAddr, client: SocketAddr) -> TcpStream {
    let inode = socket_inode(pid, server.port(), client.port()).unwrap_or_else(|| {
        panic!("process {pid} has no TCP connection from {client} to {server} in /proc")
    });
    let fd = descriptor_of(pid, inode)
        .unwrap_or_else(|| panic!("process {pid} holds no descriptor for socket {inode}"));
    // SAFETY: plain system calls on descriptors this function owns; the
    // copy is a new descriptor of this process, handed to the TcpStream
    // that closes it.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0);
        assert!(
            pidfd >= 0,
            "pidfd_open({pid}): {}",
            std::io::Error::last_os_error()
        );
        let copy = libc::syscall(libc::SYS_pidfd_getfd, pidfd as RawFd, fd, 0);
        let error = std::io::Error::last_os_error();
        libc::close(pidfd as RawFd);
        assert!(copy >= 0, "pidfd_getfd({pid}, {fd}): {error}");
        TcpStream::from_raw_fd(copy as RawFd)
    }
}

/// The inode of the connection from local port `server` to remote port
/// `client`, from the process's `/proc/PID/net/tcp` and `tcp6` tables.
fn socket_inode(pid: u32, server: u16, client: u16) -> Option<u64> {
    let port = |address: &str| u16::from_str_radix(address.rsplit(':').next()?, 16).ok();
    ["tcp", "tcp6"].iter().find_map(|table| {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).ok()?;
        text.lines().skip(1).find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
            (port(local)? == server && port(remote)? == client)
                .then(|| inode.parse().ok())
                .flatten()
        })
    })
}

/// The descriptor through which process `pid` holds socket `inode`.
fn descriptor_of(pid: u32, inode: u64) -> Option<RawFd> {
    let wanted = format!("socket:[{inode}]");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(Result::ok)
        .find(|entry| {
            std::fs::read_link(entry.path())
                .is_ok_and(|target| target.as_os_str() == wanted.as_str())
        })?
        .file_name()
        .to_str()?
        .parse()
        .ok()
}
