//! The QEMU command line for one guest, as argv (never a shell string).
//!
//! `-nodefaults -no-user-config`: nothing but what is named here (no NIC,
//! no VGA, no host config file). `-display none` and the serial console
//! into a file: the console is the guest's last words when it hangs.
//! `-no-reboot` with the kernel's `panic=-1`: a panic ends QEMU instead
//! of rebooting forever. Shares are virtio-9p with `multidevs=remap`
//! (the host's root spans several file systems, whose inode numbers would
//! otherwise collide in the guest). Disks are raw virtio-blk with
//! `cache=none`: the guest's writes reach the host's disk as it issues
//! them, not through the host's page cache.

use std::ffi::OsString;
use std::path::PathBuf;

use super::accel::Accel;
use crate::site::recorder::qemu_path;

/// A folder of the host the guest mounts over 9p.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// The guest's name for it (`mount -t 9p TAG ...`).
    pub tag: String,
    /// The host folder.
    pub path: PathBuf,
    /// Whether QEMU refuses the guest's writes to it.
    pub read_only: bool,
}

/// Everything that makes one guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestSpec {
    /// The emulator (`qemu-system-x86_64`).
    pub qemu: PathBuf,
    /// KVM or TCG.
    pub accel: Accel,
    /// The kernel image (`-kernel`): a vmlinux starts by PVH entry.
    pub kernel: PathBuf,
    /// The initramfs archive (`-initrd`).
    pub initramfs: PathBuf,
    /// Extra words for the kernel command line, after fslab's own.
    pub append: Vec<String>,
    /// The guest's memory in bytes (rounded down to whole MiB).
    pub memory_bytes: u64,
    /// Virtual processors.
    pub cpus: u32,
    /// Where the serial console is written.
    pub console: PathBuf,
    /// 9p shares, in order.
    pub shares: Vec<Share>,
    /// Raw images, as `/dev/vda`, `/dev/vdb`, ... in order.
    pub disks: Vec<PathBuf>,
    /// A write log for the first disk (`--crash` in a guest): QEMU's
    /// `blklogwrites` sits between the guest's `/dev/vda` and its image.
    pub write_log: Option<WriteLogSpec>,
}

/// Where the first disk's writes are logged, and the log's cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteLogSpec {
    /// The log file, already `cap_bytes` long (all holes).
    pub path: PathBuf,
    /// The most the log may take: the raw node over it is this long, and
    /// a write past it fails in the guest.
    pub cap_bytes: u64,
}

/// The kernel command line fslab always gives: the console on the first
/// serial port, a panic ends the guest at once, few messages (each costs
/// time on an emulated serial port).
pub const CMDLINE: &[&str] = &["console=ttyS0", "panic=-1", "quiet"];

impl GuestSpec {
    /// The arguments after the program name.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |words: &[&str]| args.extend(words.iter().map(OsString::from));
        push(&["-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"]);
        let cpu = if self.accel.emulated() { "max" } else { "host" };
        push(&["-accel", self.accel.qemu_name(), "-cpu", cpu]);
        let mib = (self.memory_bytes >> 20).max(64).to_string();
        let cpus = self.cpus.max(1).to_string();
        push(&["-m", &mib, "-smp", &cpus]);
        let mut cmdline: Vec<String> = CMDLINE.iter().map(|s| s.to_string()).collect();
        cmdline.extend(self.append.iter().cloned());
        args.push("-kernel".into());
        args.push(self.kernel.clone().into());
        args.push("-initrd".into());
        args.push(self.initramfs.clone().into());
        args.push("-append".into());
        args.push(cmdline.join(" ").into());
        args.push("-chardev".into());
        args.push(qemu_path("file,id=console,path=", &self.console));
        args.extend(["-serial".into(), "chardev:console".into()]);
        for (i, share) in self.shares.iter().enumerate() {
            let mut fsdev = qemu_path(&format!("local,id=share{i},path="), &share.path);
            // A share the guest writes keeps the guest's owners and modes
            // in xattrs: its root makes plain files on the host, never a
            // device node or a setuid file. The read-only root shows the
            // host's as they are.
            fsdev.push(if share.read_only { ",security_model=none,readonly=on" } else { ",security_model=mapped-xattr" });
            fsdev.push(",multidevs=remap");
            args.extend(["-fsdev".into(), fsdev]);
            args.extend(["-device".into(), format!("virtio-9p-pci,fsdev=share{i},mount_tag={}", share.tag).into()]);
        }
        for (i, disk) in self.disks.iter().enumerate() {
            match (&self.write_log, i) {
                (Some(log), 0) => args.extend(logged_disk(disk, log)),
                _ => {
                    let mut drive = qemu_path("file=", disk);
                    drive.push(format!(",format=raw,if=none,id=disk{i},cache=none,aio=threads"));
                    args.extend(["-drive".into(), drive]);
                }
            }
            args.extend(["-device".into(), format!("virtio-blk-pci,drive=disk{i}").into()]);
        }
        args
    }
}

/// The first disk with its writes logged: the image (direct, as
/// `cache=none` gives the other disks, and discards punched, so the log's
/// discard entries are what the image holds), the log (never flushed to
/// the host's disk: it need not outlive a power cut of the host), a raw
/// node capping it, and `blklogwrites` over both as the node the guest's
/// device is attached to (`disk0`). The same graph the host's recorder
/// uses, with virtio in place of the FUSE export.
fn logged_disk(disk: &std::path::Path, log: &WriteLogSpec) -> Vec<OsString> {
    let mut image = qemu_path("driver=file,node-name=disk0image,filename=", disk);
    image.push(",cache.direct=on,aio=threads,discard=unmap");
    let mut logfile = qemu_path("driver=file,node-name=disk0logfile,filename=", &log.path);
    logfile.push(",cache.no-flush=on");
    let nodes: [OsString; 4] = [
        image,
        logfile,
        format!("driver=raw,node-name=disk0log,file=disk0logfile,size={}", log.cap_bytes).into(),
        "driver=blklogwrites,node-name=disk0,file=disk0image,log=disk0log,log-sector-size=512,discard=unmap".into(),
    ];
    nodes.into_iter().flat_map(|node| [OsString::from("-blockdev"), node]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> GuestSpec {
        GuestSpec {
            qemu: "qemu-system-x86_64".into(),
            accel: Accel::Tcg { why: "test".into() },
            kernel: "/k/vmlinux".into(),
            initramfs: "/r/initramfs.cpio".into(),
            append: vec!["fslab.case=1".into()],
            memory_bytes: 512 << 20,
            cpus: 2,
            console: "/r/a,b/console.log".into(),
            shares: vec![
                Share { tag: "fslabroot".into(), path: "/".into(), read_only: true },
                Share { tag: "fslabout".into(), path: "/r/out".into(), read_only: false },
            ],
            disks: vec!["/r/scratch.img".into()],
            write_log: None,
        }
    }

    fn joined(spec: &GuestSpec) -> String {
        spec.args().iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_tcg_guest_gets_its_memory_console_shares_and_disk() {
        let line = joined(&spec());
        for part in [
            "-accel tcg -cpu max",
            "-m 512 -smp 2",
            "-kernel /k/vmlinux -initrd /r/initramfs.cpio",
            "-append console=ttyS0 panic=-1 quiet fslab.case=1",
            "-chardev file,id=console,path=/r/a,,b/console.log -serial chardev:console",
            "-fsdev local,id=share0,path=/,security_model=none,readonly=on,multidevs=remap -device virtio-9p-pci,fsdev=share0,mount_tag=fslabroot",
            "-fsdev local,id=share1,path=/r/out,security_model=mapped-xattr,multidevs=remap -device virtio-9p-pci,fsdev=share1,mount_tag=fslabout",
            "-drive file=/r/scratch.img,format=raw,if=none,id=disk0,cache=none,aio=threads -device virtio-blk-pci,drive=disk0",
        ] {
            assert!(line.contains(part), "{part:?} not in {line}");
        }
        assert!(line.starts_with("-nodefaults -no-user-config -display none -no-reboot"), "{line}");
    }

    #[test]
    fn a_logged_disk_is_blklogwrites_over_its_image_and_a_capped_log() {
        let mut spec = spec();
        spec.write_log = Some(WriteLogSpec { path: "/r/log/writes.log".into(), cap_bytes: 1 << 30 });
        let line = joined(&spec);
        assert!(!line.contains("-drive"), "{line}");
        for part in [
            "-blockdev driver=file,node-name=disk0image,filename=/r/scratch.img,cache.direct=on,aio=threads,discard=unmap",
            "-blockdev driver=file,node-name=disk0logfile,filename=/r/log/writes.log,cache.no-flush=on",
            "-blockdev driver=raw,node-name=disk0log,file=disk0logfile,size=1073741824",
            "-blockdev driver=blklogwrites,node-name=disk0,file=disk0image,log=disk0log,log-sector-size=512,discard=unmap \
             -device virtio-blk-pci,drive=disk0",
        ] {
            assert!(line.contains(part), "{part:?} not in {line}");
        }
    }

    #[test]
    fn a_kvm_guest_uses_the_host_cpu() {
        let mut spec = spec();
        spec.accel = Accel::Kvm;
        assert!(joined(&spec).contains("-accel kvm -cpu host"));
    }
}
