//! A `newc` cpio archive writer: the format the kernel unpacks an
//! initramfs from (`Documentation/driver-api/early-userspace/buffer-format.rst`).
//! Uncompressed: decompressing under software emulation costs more boot
//! time than reading the bytes does.
//!
//! Each entry is a 110-byte ASCII header (`070701` and thirteen 8-digit
//! hex fields), the NUL-terminated name padded to a multiple of 4, then
//! the data padded to a multiple of 4; `TRAILER!!!` ends the archive.

use std::io::{self, Write};

/// Writes entries one after another; parents must come before what is in
/// them. Owner and times are 0 (root, the epoch), so an archive depends
/// only on what was put in.
#[derive(Debug)]
pub struct CpioWriter<W: Write> {
    out: W,
    next_inode: u32,
    written: u64,
}

const FILE: u32 = 0o100000;
const DIR: u32 = 0o040000;
const SYMLINK: u32 = 0o120000;

impl<W: Write> CpioWriter<W> {
    /// Start an archive on `out`.
    pub fn new(out: W) -> CpioWriter<W> {
        CpioWriter { out, next_inode: 1, written: 0 }
    }

    /// A folder, `mode` its permission bits (`0o755`).
    pub fn dir(&mut self, name: &str, mode: u32) -> io::Result<()> {
        self.entry(name, DIR | (mode & 0o7777), 2, b"")
    }

    /// A regular file holding `data`.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, FILE | (mode & 0o7777), 1, data)
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.entry(name, SYMLINK | 0o777, 1, target.as_bytes())
    }

    /// Write the trailer and hand back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.next_inode = 0;
        self.entry("TRAILER!!!", 0, 1, b"")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(&mut self, name: &str, mode: u32, links: u32, data: &[u8]) -> io::Result<()> {
        let name = name.trim_start_matches('/');
        if name.is_empty() || name.as_bytes().contains(&0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a name for a cpio entry: {name:?}")));
        }
        let size = u32::try_from(data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: over 4 GiB, too big for cpio")))?;
        let name_size = name.len() as u32 + 1;
        let inode = self.next_inode;
        self.next_inode += 1;
        // ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
        // rdevmajor, rdevminor, namesize, check.
        let fields = [inode, mode, 0, 0, links, 0, size, 0, 0, 0, 0, name_size, 0];
        let mut header = String::with_capacity(110);
        header.push_str("070701");
        for field in fields {
            header.push_str(&format!("{field:08X}"));
        }
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()?;
        self.put(data)?;
        self.pad()
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let pad = (4 - self.written % 4) % 4;
        self.put(&[0; 3][..pad as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries read back: (name, mode, data), the trailer excluded.
    fn read_back(mut archive: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut entries = Vec::new();
        let mut at = 0usize;
        let align = |n: usize| n.div_ceil(4) * 4;
        loop {
            assert_eq!(&archive[..6], b"070701");
            let field = |i: usize| u32::from_str_radix(std::str::from_utf8(&archive[6 + i * 8..14 + i * 8]).unwrap(), 16).unwrap();
            let (mode, size, name_size) = (field(1), field(6) as usize, field(11) as usize);
            let name = String::from_utf8(archive[110..110 + name_size - 1].to_vec()).unwrap();
            let data_at = align(at + 110 + name_size) - at;
            let data = archive[data_at..data_at + size].to_vec();
            let next = align(at + data_at + size) - at;
            at += next;
            archive = &archive[next..];
            if name == "TRAILER!!!" {
                assert!(archive.is_empty());
                return entries;
            }
            entries.push((name, mode, data));
        }
    }

    #[test]
    fn entries_read_back_with_their_modes_and_four_byte_alignment() {
        let mut cpio = CpioWriter::new(Vec::new());
        cpio.dir("bin", 0o755).unwrap();
        cpio.file("/init", 0o755, b"#!/bin/busybox sh\n").unwrap();
        cpio.file("bin/odd", 0o644, b"abcde").unwrap();
        cpio.symlink("bin/sh", "busybox").unwrap();
        let archive = cpio.finish().unwrap();
        assert_eq!(archive.len() % 4, 0);
        let entries = read_back(&archive);
        let got: Vec<(&str, u32, &[u8])> = entries.iter().map(|(n, m, d)| (n.as_str(), *m, d.as_slice())).collect();
        assert_eq!(
            got,
            [
                ("bin", 0o040755, &b""[..]),
                ("init", 0o100755, b"#!/bin/busybox sh\n"),
                ("bin/odd", 0o100644, b"abcde"),
                ("bin/sh", 0o120777, b"busybox"),
            ]
        );
    }

    #[test]
    fn busybox_cpio_lists_what_was_written() {
        let Ok(out) = std::process::Command::new("busybox").arg("--list").output() else {
            eprintln!("skipped: no busybox");
            return;
        };
        if !String::from_utf8_lossy(&out.stdout).lines().any(|l| l == "cpio") {
            eprintln!("skipped: busybox has no cpio");
            return;
        }
        let mut cpio = CpioWriter::new(Vec::new());
        cpio.dir("modules", 0o755).unwrap();
        cpio.file("modules/a.ko", 0o644, &[7u8; 1001]).unwrap();
        let archive = cpio.finish().unwrap();
        let mut child = std::process::Command::new("busybox")
            .args(["cpio", "-t"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&archive).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().collect::<Vec<_>>(), ["modules", "modules/a.ko"]);
    }

    #[test]
    fn an_empty_name_is_refused() {
        let mut cpio = CpioWriter::new(Vec::new());
        assert!(cpio.file("/", 0o644, b"").is_err());
    }
}
