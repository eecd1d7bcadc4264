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
//! Layering: `vm` sits above `target` (it uses the ledger and folders)
//! and below `harness`, which will run a case in a guest.

pub mod accel;
pub mod console;
pub mod cpio;
pub mod guest;
pub mod image;
pub mod initramfs;
pub mod kernel;
pub mod modinfo;
pub mod modules;
pub mod qemu;
