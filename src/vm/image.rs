//! What a kernel image is: a `bzImage` (what distributions ship as
//! `vmlinuz`) or an uncompressed ELF `vmlinux`, its release, and whether
//! QEMU can start it by PVH entry (an ELF with Xen's
//! `XEN_ELFNOTE_PHYS32_ENTRY` note, type 18). PVH skips the firmware's
//! real-mode setup and the kernel's self-decompression, which under TCG is
//! the slow part of a boot: measured here, Debian 6.1's bzImage (xz) took
//! 79 s from QEMU's start to power-off and its vmlinux 48 s, the guest's
//! own clock agreeing to a second (a loaded 2-core host). So a bzImage is
//! unpacked once into a `vmlinux` ([`extract_vmlinux`]): the boot header
//! says where the compressed payload lies (`payload_offset`,
//! `payload_length`, boot protocol 2.08+), and the host's `xz`, `zstd`,
//! `gzip`, `lz4`, `bzip2`, `lzma` or `lzop` decompresses it.
//!
//! An image is read once, whole, by [`super::kernel::locate`] (a regular
//! file of root's or the user's, in folders no one else can write, never
//! past [`MAX_IMAGE_BYTES`]); everything here works on those bytes.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{le16, le32, le64};
use crate::error::{Error, Result};

/// The most fslab reads of a kernel image, as given or unpacked: a stock
/// kernel is 5-15 MiB as a bzImage and 30-80 MiB as a vmlinux (Debian
/// 6.1's: 8 MiB and 63 MiB); a vmlinux with debug info can pass it, and
/// boots the same stripped (`strip --strip-debug`).
pub const MAX_IMAGE_BYTES: u64 = 512 << 20;

/// A kernel image, inspected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelImage {
    /// Where it is.
    pub path: PathBuf,
    /// `bzimage` or `vmlinux`.
    pub format: Format,
    /// The release (`6.1.0-56-amd64`), from the boot header's version
    /// string or the ELF's `Linux version` banner; `None` if not found.
    pub release: Option<String>,
    /// Whether QEMU can start it by PVH entry (ELF with the PVH note).
    pub pvh: bool,
    /// For a bzImage: how its payload is compressed (`xz`, ...).
    pub compression: Option<&'static str>,
}

/// The two shapes a kernel image comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// x86 boot protocol image: real-mode setup, then a compressed payload.
    Bzimage,
    /// The uncompressed ELF kernel.
    Vmlinux,
}

/// Compressed payload formats: magic, name, the tool that decompresses
/// it, and whether the kernel's build appended the 4-byte uncompressed
/// size after the stream (every method but gzip, whose trailer has it).
const COMPRESSIONS: &[(&[u8], &str, bool)] = &[
    (b"\xfd7zXZ\x00", "xz", true),
    (b"\x1f\x8b", "gzip", false),
    (b"\x28\xb5\x2f\xfd", "zstd", true),
    (b"\x02\x21\x4c\x18", "lz4", true),
    (b"BZh", "bzip2", true),
    (b"\x5d\x00\x00", "lzma", true),
    (b"\x89LZO", "lzop", true),
];

impl KernelImage {
    /// Inspect an image held in memory.
    pub fn of_bytes(path: &Path, bytes: &[u8]) -> Result<KernelImage> {
        if bytes.starts_with(b"\x7fELF") {
            return Ok(KernelImage {
                path: path.to_path_buf(),
                format: Format::Vmlinux,
                release: banner_release(bytes),
                pvh: has_pvh_note(bytes),
                compression: None,
            });
        }
        if bytes.get(0x202..0x206) == Some(b"HdrS") {
            let release = le16(bytes, 0x20e)
                .filter(|p| *p != 0)
                .and_then(|p| bytes.get(usize::from(p) + 0x200..))
                .and_then(|s| s.split(|b| *b == b' ' || *b == 0).next())
                .and_then(|s| std::str::from_utf8(s).ok())
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            let compression = payload(bytes).ok().and_then(|(p, _)| compression_of(p)).map(|(name, _)| name);
            return Ok(KernelImage { path: path.to_path_buf(), format: Format::Bzimage, release, pvh: false, compression });
        }
        Err(Error::usage(format!(
            "{}: not a kernel image (neither an ELF vmlinux nor a bzImage with the HdrS boot header); \
             give --kernel a vmlinuz/bzImage or vmlinux",
            path.display()
        )))
    }
}

/// The compressed payload of a bzImage and its length, from the boot header.
fn payload(bytes: &[u8]) -> Result<(&[u8], usize)> {
    let version = le16(bytes, 0x206).unwrap_or(0);
    if version < 0x208 {
        return Err(Error::usage(format!(
            "boot protocol {}.{:02} has no payload fields (2.08 or later needed): give the kernel as a vmlinux",
            version >> 8,
            version & 0xff
        )));
    }
    let setup_sects = match bytes.get(0x1f1) {
        Some(0) | None => 4,
        Some(n) => usize::from(*n),
    };
    let offset = le32(bytes, 0x248).unwrap_or(0) as usize;
    let length = le32(bytes, 0x24c).unwrap_or(0) as usize;
    let start = (setup_sects + 1) * 512 + offset;
    let slice = bytes.get(start..start + length).ok_or_else(|| Error::usage("the bzImage's payload lies past its end"))?;
    Ok((slice, length))
}

fn compression_of(payload: &[u8]) -> Option<(&'static str, bool)> {
    COMPRESSIONS.iter().find(|(magic, _, _)| payload.starts_with(magic)).map(|(_, name, sized)| (*name, *sized))
}

/// The first word after `Linux version ` (the kernel's `linux_banner`).
fn banner_release(bytes: &[u8]) -> Option<String> {
    const BANNER: &[u8] = b"Linux version ";
    let at = bytes.windows(BANNER.len()).position(|w| w == BANNER)? + BANNER.len();
    let word: Vec<u8> = bytes[at..].iter().take(128).take_while(|b| b.is_ascii_graphic()).copied().collect();
    String::from_utf8(word).ok().filter(|s| !s.is_empty())
}

/// Whether an ELF64 image has a `Xen` note of type 18 (PVH entry) in a
/// `PT_NOTE` segment.
fn has_pvh_note(bytes: &[u8]) -> bool {
    let (Some(phoff), Some(entsize), Some(count)) = (le64(bytes, 0x20), le16(bytes, 0x36), le16(bytes, 0x38)) else {
        return false;
    };
    (0..usize::from(count)).any(|i| {
        let at = phoff as usize + i * usize::from(entsize);
        if le32(bytes, at) != Some(4) {
            return false; // not PT_NOTE
        }
        let (Some(offset), Some(size)) = (le64(bytes, at + 8), le64(bytes, at + 32)) else { return false };
        let Some(mut notes) = bytes.get(offset as usize..(offset + size) as usize) else { return false };
        while notes.len() >= 12 {
            let (name_len, desc_len, kind) =
                (le32(notes, 0).unwrap_or(0) as usize, le32(notes, 4).unwrap_or(0) as usize, le32(notes, 8));
            let name = notes.get(12..12 + name_len).unwrap_or_default();
            if name == b"Xen\0" && kind == Some(18) {
                return true;
            }
            let next = 12 + name_len.div_ceil(4) * 4 + desc_len.div_ceil(4) * 4;
            notes = notes.get(next..).unwrap_or_default();
        }
        false
    })
}

/// The ELF `vmlinux` inside a bzImage's `bytes` (`shown` names it),
/// unpacked by the host's decompressor for its payload, at most
/// [`MAX_IMAGE_BYTES`]; it must be an ELF with the PVH note.
pub fn unpack_vmlinux(bytes: &[u8], shown: &Path) -> Result<Vec<u8>> {
    let (payload, _) = payload(bytes)?;
    let (tool, sized) = compression_of(payload).ok_or_else(|| {
        Error::usage(format!("{}: the payload's compression is none fslab knows; give the kernel as a vmlinux", shown.display()))
    })?;
    // The size the build appended is no part of the stream.
    let stream = if sized { &payload[..payload.len().saturating_sub(4)] } else { payload };
    let vmlinux = super::unpack::decompress(tool, stream, MAX_IMAGE_BYTES, shown)?;
    let image = KernelImage::of_bytes(shown, &vmlinux)?;
    if image.format != Format::Vmlinux || !image.pvh {
        return Err(Error::failed(format!(
            "{}: the unpacked kernel is no ELF with a PVH entry note; boot the bzImage itself",
            shown.display()
        )));
    }
    Ok(vmlinux)
}

/// An ELF64 with one PT_NOTE segment holding a Xen note of `kind`, and
/// a banner: for tests here and in `kernel.rs`.
#[cfg(test)]
pub(crate) fn fake_vmlinux(kind: u32) -> Vec<u8> {
    let mut elf = vec![0u8; 64 + 56];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
    elf[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
    elf[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
    let mut note = Vec::new();
    note.extend_from_slice(&4u32.to_le_bytes());
    note.extend_from_slice(&8u32.to_le_bytes());
    note.extend_from_slice(&kind.to_le_bytes());
    note.extend_from_slice(b"Xen\0");
    note.extend_from_slice(&0x1000850u64.to_le_bytes());
    let ph = 64;
    elf[ph..ph + 4].copy_from_slice(&4u32.to_le_bytes());
    elf[ph + 8..ph + 16].copy_from_slice(&(120u64).to_le_bytes());
    elf[ph + 32..ph + 40].copy_from_slice(&(note.len() as u64).to_le_bytes());
    elf.extend_from_slice(&note);
    elf.extend_from_slice(b"\0Linux version 6.1.0-test (x@y) #1 SMP\0");
    elf
}

#[cfg(test)]
/// A bzImage-shaped file: boot header, version string, an xz payload
/// of `inner` followed by its 4-byte size: for tests here and in
/// `prepare.rs`.
pub(crate) fn fake_bzimage(inner: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut xz = Command::new("xz").args(["-c", "--check=crc32"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    xz.stdin.take().unwrap().write_all(inner).unwrap();
    let mut payload = xz.wait_with_output().unwrap().stdout;
    payload.extend_from_slice(&(inner.len() as u32).to_le_bytes());
    let mut image = vec![0u8; 5 * 512];
    image[0x1f1] = 4;
    image[0x202..0x206].copy_from_slice(b"HdrS");
    image[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
    image[0x20e..0x210].copy_from_slice(&0x300u16.to_le_bytes());
    image[0x500..0x500 + 20].copy_from_slice(b"6.1.0-test (x@y) #1\0");
    image[0x248..0x24c].copy_from_slice(&16u32.to_le_bytes());
    image[0x24c..0x250].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    image.extend_from_slice(&[0u8; 16]);
    image.extend_from_slice(&payload);
    image
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elf_with_the_pvh_note_boots_by_pvh_and_says_its_release() {
        let image = KernelImage::of_bytes(Path::new("vmlinux"), &fake_vmlinux(18)).unwrap();
        assert_eq!(image.format, Format::Vmlinux);
        assert!(image.pvh);
        assert_eq!(image.release.as_deref(), Some("6.1.0-test"));
        assert!(!KernelImage::of_bytes(Path::new("vmlinux"), &fake_vmlinux(5)).unwrap().pvh);
    }

    #[test]
    fn a_bzimage_says_its_release_and_compression_and_unpacks_to_its_vmlinux() {
        let dir = crate::test_temp::dir("");
        let inner = fake_vmlinux(18);
        let bz = dir.path().join("vmlinuz");
        std::fs::write(&bz, fake_bzimage(&inner)).unwrap();
        let bytes = std::fs::read(&bz).unwrap();
        let image = KernelImage::of_bytes(&bz, &bytes).unwrap();
        assert_eq!((image.format, image.release.as_deref(), image.compression), (Format::Bzimage, Some("6.1.0-test"), Some("xz")));
        assert_eq!(unpack_vmlinux(&bytes, &bz).unwrap(), inner);
    }

    #[test]
    fn anything_else_is_refused_as_usage() {
        let err = KernelImage::of_bytes(Path::new("x"), b"hello").unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Usage);
        assert!(err.message.contains("not a kernel image"), "{}", err.message);
    }
}
