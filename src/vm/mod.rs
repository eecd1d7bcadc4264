//! Guests: a kernel other than the host's, booted in a small QEMU virtual
//! machine per case (issue 17, `--kernel`). The guest sees the host's root
//! file system read-only over 9p (under a tmpfs overlay), its scratch disk
//! as a virtio block device backed by an image file, and hands its output
//! back through a second 9p share; the host's own fslab binary runs the
//! case inside it.
//!
//! The building blocks, each testable without booting anything:
//! [`image`] (bzImage or vmlinux, release, PVH, unpacking), [`modules`]
//! (what the guest must load, resolved from the kernel's own tree through
//! [`modinfo`]), [`cpio`] (the initramfs archive), [`initramfs`] (busybox,
//! the modules and an init script), [`accel`] (KVM, PVM or TCG),
//! [`qemu`] (the command line), [`console`] (the console's last lines)
//! and [`guest`] (start QEMU, in the ledger, and kill it at a timeout);
//! [`kernel`] says what an image can do here (`fslab kernels`).
//!
//! What the harness calls, composed of those: [`prepare`] checks a
//! `--kernel` image once per run ([`prepare::GuestKernel`]: the image and
//! its module tree held to `ledger::given`'s rule and read once, QEMU,
//! busybox, and what boots written into the kernel cache, a bzImage's
//! vmlinux unpacked) and [`session`] runs one job in a guest of it
//! ([`session::run_job`]: files made and ledgered, initramfs, QEMU, every
//! file released). `scripts/debian-kernel.sh` fetches the Debian 6.1
//! kernel the tests boot.
//!
//! Layering: `vm` sits above `target` (it uses the ledger and folders)
//! and below `harness`, which runs a case in a guest.

pub mod accel;
pub mod capped;
pub mod console;
pub mod cpio;
pub mod guest;
pub mod image;
pub mod initramfs;
pub mod kernel;
pub mod modinfo;
pub mod modules;
pub mod prepare;
pub mod qemu;
pub mod session;
pub mod unpack;

/// The little-endian integer of `len` bytes at `at`, `None` past the end:
/// how the ELF and boot-header readers here read every field.
fn le(bytes: &[u8], at: usize, len: usize) -> Option<u64> {
    let field = bytes.get(at..at.checked_add(len)?)?;
    Some(field.iter().rev().fold(0u64, |v, b| (v << 8) | u64::from(*b)))
}

/// A little-endian `u16` at `at`.
fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    le(bytes, at, 2).map(|v| v as u16)
}

/// A little-endian `u32` at `at`.
fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    le(bytes, at, 4).map(|v| v as u32)
}

/// A little-endian `u64` at `at`.
fn le64(bytes: &[u8], at: usize) -> Option<u64> {
    le(bytes, at, 8)
}
