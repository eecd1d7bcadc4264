//! A kernel module's `.modinfo` section, read without loading anything:
//! `depends=`, `softdep=` and `alias=` lines are what `depmod` builds
//! `modules.dep` from. A Debian kernel package ships no `modules.dep`
//! (its postinst runs depmod), and the host may have no kmod tools, so
//! fslab reads the section itself: the ELF64 header, the section headers,
//! their name table and `.modinfo` — a few small reads per module.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use super::{le16, le32, le64};

/// What one module declares about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModInfo {
    /// `name=`: the module's name as the kernel knows it (`crc32c_generic`).
    pub name: Option<String>,
    /// `depends=`: modules whose symbols it uses; they must load first.
    pub depends: Vec<String>,
    /// `softdep=pre: ...`: modules (or aliases) to load before it though no
    /// symbol says so (`ext4` wants `crypto-crc32c`).
    pub pre: Vec<String>,
    /// `softdep=post: ...`: to load after it.
    pub post: Vec<String>,
    /// `alias=`: other names it answers to (`fs-ext3`, `crypto-crc32c`).
    pub aliases: Vec<String>,
    /// `vermagic=`: the release it was built for, first word.
    pub vermagic: Option<String>,
}

impl ModInfo {
    /// Parse a `.modinfo` section: `key=value` strings, NUL-separated.
    pub fn parse(section: &[u8]) -> ModInfo {
        let mut info = ModInfo::default();
        for entry in section.split(|b| *b == 0) {
            let Ok(entry) = std::str::from_utf8(entry) else { continue };
            let Some((key, value)) = entry.split_once('=') else { continue };
            match key {
                "name" => info.name = Some(value.to_string()),
                "depends" => info.depends.extend(value.split(',').filter(|d| !d.is_empty()).map(str::to_string)),
                "alias" => info.aliases.push(value.to_string()),
                "vermagic" => info.vermagic = value.split_whitespace().next().map(str::to_string),
                "softdep" => {
                    // `pre: a b post: c`, as modprobe.d spells it.
                    let mut list = None;
                    for word in value.split_whitespace() {
                        match word {
                            "pre:" => list = Some(true),
                            "post:" => list = Some(false),
                            name => match list {
                                Some(true) => info.pre.push(name.to_string()),
                                Some(false) => info.post.push(name.to_string()),
                                None => {}
                            },
                        }
                    }
                }
                _ => {}
            }
        }
        info
    }

    /// Read the `.modinfo` of an uncompressed `.ko` open as `file`, `size`
    /// bytes long: a few small reads, none past the end (a header that
    /// says otherwise is refused, not believed).
    pub fn of_file(file: &File, size: u64) -> io::Result<ModInfo> {
        let section = modinfo_section(|offset, len| {
            if offset.checked_add(len as u64).is_none_or(|end| end > size) {
                return Err(bad("a section past the end"));
            }
            let mut buf = vec![0; len];
            file.read_exact_at(&mut buf, offset)?;
            Ok(buf)
        })?;
        Ok(ModInfo::parse(&section))
    }

    /// Read the `.modinfo` of a module held in memory (a decompressed
    /// `.ko.xz`, a test's bytes).
    pub fn of_bytes(bytes: &[u8]) -> io::Result<ModInfo> {
        let section = modinfo_section(|offset, len| {
            let start = usize::try_from(offset).map_err(|_| bad("offset past the end"))?;
            bytes.get(start..start.saturating_add(len)).map(<[u8]>::to_vec).ok_or_else(|| bad("a section past the end"))
        })?;
        Ok(ModInfo::parse(&section))
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("not a 64-bit little-endian ELF module: {what}"))
}

/// The bytes of the `.modinfo` section (empty when there is none), read
/// through `read(offset, len)`.
fn modinfo_section(read: impl Fn(u64, usize) -> io::Result<Vec<u8>>) -> io::Result<Vec<u8>> {
    let header = read(0, 64)?;
    if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err(bad("wrong magic, class or byte order"));
    }
    let field16 = |at| le16(&header, at).map(usize::from).unwrap_or(0);
    let shoff = le64(&header, 0x28).unwrap_or(0);
    let (entsize, count, names_index) = (field16(0x3a), field16(0x3c), field16(0x3e));
    if entsize < 64 || names_index >= count {
        return Err(bad("no section name table"));
    }
    let table = read(shoff, entsize * count)?;
    let section = |i: usize| {
        let s = &table[i * entsize..];
        (le32(s, 0).unwrap_or(0) as usize, le64(s, 0x18).unwrap_or(0), le64(s, 0x20).unwrap_or(0))
    };
    let (_, names_offset, names_size) = section(names_index);
    let names = read(names_offset, usize::try_from(names_size).map_err(|_| bad("huge name table"))?)?;
    for i in 0..count {
        let (name_at, offset, size) = section(i);
        let name = names.get(name_at..).and_then(|n| n.split(|b| *b == 0).next()).unwrap_or_default();
        if name == b".modinfo" {
            return read(offset, usize::try_from(size).map_err(|_| bad("huge .modinfo"))?);
        }
    }
    Ok(Vec::new())
}

/// Write a [`fake_module`] holding `entries` at `tree/rel`, making its
/// folders: the module trees of the tests in `modules.rs`, `kernel.rs` and
/// `prepare_tests.rs`.
#[cfg(test)]
pub(crate) fn write_fake_module(tree: &std::path::Path, rel: &str, entries: &[&str]) {
    let path = tree.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, fake_module(entries)).unwrap();
}

/// A minimal ELF64 module with one `.modinfo` section holding `entries`,
/// for tests here and in `modules.rs`.
#[cfg(test)]
pub(crate) fn fake_module(entries: &[&str]) -> Vec<u8> {
    let mut modinfo = Vec::new();
    for e in entries {
        modinfo.extend_from_slice(e.as_bytes());
        modinfo.push(0);
    }
    let names = b"\0.shstrtab\0.modinfo\0".to_vec();
    let names_at = 64u64;
    let modinfo_at = names_at + names.len() as u64;
    let shoff = modinfo_at + modinfo.len() as u64;
    let mut out = vec![0u8; 64];
    out[..6].copy_from_slice(b"\x7fELF\x02\x01");
    out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
    out[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&names);
    out.extend_from_slice(&modinfo);
    let header = |name: u32, offset: u64, size: u64| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&name.to_le_bytes());
        h[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
        h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
        h
    };
    out.extend(header(0, 0, 0));
    out.extend(header(1, names_at, names.len() as u64));
    out.extend(header(11, modinfo_at, modinfo.len() as u64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_softdeps_and_aliases_are_read_from_the_section() {
        let module = fake_module(&[
            "softdep=pre: crypto-crc32c",
            "alias=fs-ext4",
            "alias=ext3",
            "depends=jbd2,mbcache,crc16",
            "name=ext4",
            "vermagic=6.1.0-56-amd64 SMP preempt mod_unload modversions ",
        ]);
        let info = ModInfo::of_bytes(&module).unwrap();
        assert_eq!(info.name.as_deref(), Some("ext4"));
        assert_eq!(info.depends, ["jbd2", "mbcache", "crc16"]);
        assert_eq!(info.pre, ["crypto-crc32c"]);
        assert!(info.post.is_empty());
        assert_eq!(info.aliases, ["fs-ext4", "ext3"]);
        assert_eq!(info.vermagic.as_deref(), Some("6.1.0-56-amd64"));
    }

    #[test]
    fn an_empty_depends_and_a_two_sided_softdep() {
        let info = ModInfo::parse(b"depends=\0softdep=pre: a b post: c\0");
        assert!(info.depends.is_empty());
        assert_eq!(info.pre, ["a", "b"]);
        assert_eq!(info.post, ["c"]);
    }

    #[test]
    fn a_file_that_is_no_elf_module_is_refused() {
        let err = ModInfo::of_bytes(&[0u8; 64]).unwrap_err();
        assert!(err.to_string().contains("not a 64-bit little-endian ELF module"), "{err}");
        assert!(ModInfo::of_bytes(b"short").is_err());
    }
}
