//! The guest's initramfs: a static busybox, the modules the guest needs
//! (decompressed, in load order) and an init script. The init script
//! loads the modules, mounts the host's root read-only over 9p under a
//! tmpfs overlay (so the host's tools are there and nothing the guest
//! writes reaches the host), mounts the output share, runs the job the
//! host wrote there (`job`, a shell script running the fslab binary the
//! host left beside it, [`SHIPPED`]) in a chroot, leaves `stdout`,
//! `stderr` and `status` beside it and powers off.
//!
//! `/tmp`, `/run` and `/var/tmp` are fresh tmpfs mounts in the guest: the
//! host's `/var/tmp/fslab/state` holds other runs' ledgers, which a fslab
//! in the guest would otherwise find (through the read-only share) and try
//! to release. The archive depends only on the busybox and modules given,
//! so one kernel's archive serves every case of that kernel.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use super::cpio::CpioWriter;
use super::{le16, le32, le64};
use super::modules::Loaded;
use crate::error::{Error, Result};

/// What the init script prints before each step's name and the guest's
/// uptime, on the console: `fslab-guest: modules 9.25`.
pub const MARK: &str = "fslab-guest: ";
/// What it prints before a step that failed, and the guest then powers off.
pub const FAILED: &str = "fslab-guest-failed: ";
/// The 9p tag of the host's root, shared read-only.
pub const ROOT_TAG: &str = "fslabroot";
/// The 9p tag of the share the job and its output go through.
pub const OUT_TAG: &str = "fslabout";
/// Where the output share is mounted in the guest's root.
pub const OUT_DIR: &str = "/fslab-out";
/// The name the fslab binary a guest runs has in the output share.
pub const SHIPPED: &str = "fslab";
/// The tag of the share holding the disk's write log (`--crash`), which
/// the guest mounts read-only at [`LOG_DIR`].
pub const LOG_TAG: &str = "fslablog";
/// Where the guest sees the write log's folder.
pub const LOG_DIR: &str = "/fslab-log";
/// The 9p options: the Linux dialect, and 512 KiB messages (the default
/// 8 KiB makes every read of a binary from the host's root slow).
const NINEP: &str = "trans=virtio,version=9p2000.L,msize=524288";

/// The init script for a guest that loads `modules` (names, in order,
/// each at `/modules/NAME.ko`), and mounts the write log's share when
/// `log_share`.
pub fn init_script(modules: &[String], log_share: bool) -> String {
    // The log is read as QEMU writes it: no page cache in the guest.
    let log = if log_share {
        format!(
            "mkdir -p /newroot{LOG_DIR}\nmount -t 9p -o {NINEP},ro,cache=none {LOG_TAG} /newroot{LOG_DIR} || fail \"mount the write log's share\"\n"
        )
    } else {
        String::new()
    };
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mark() {{ echo "{MARK}$1 $(cut -d' ' -f1 /proc/uptime)"; }}
fail() {{ echo "{FAILED}$*"; sync; poweroff -f; }}
mark init
for m in {modules}; do insmod /modules/$m.ko || echo "{FAILED}insmod $m (going on)"; done
mark modules
mkdir -p /lower /rw /newroot
mount -t 9p -o {NINEP},ro {ROOT_TAG} /lower || fail "mount the host's root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw && mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || fail "overlay the host's root"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mount -t tracefs tracefs /newroot/sys/kernel/tracing 2>/dev/null
for d in /tmp /run /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs /newroot$d; done
mkdir -p /newroot{OUT_DIR}
mount -t 9p -o {NINEP} {OUT_TAG} /newroot{OUT_DIR} || fail "mount the output share"
{log}mark mounted
chroot /newroot /bin/sh {OUT_DIR}/job > /newroot{OUT_DIR}/stdout 2> /newroot{OUT_DIR}/stderr
echo $? > /newroot{OUT_DIR}/status
mark done
sync
umount /newroot{OUT_DIR}
poweroff -f
"#,
        modules = if modules.is_empty() { "''".to_string() } else { modules.join(" ") },
    )
}

/// The job script for `argv`, run by the guest's `/bin/sh` in its root:
/// the host's usual PATH, `/tmp` as the working folder, every argument
/// quoted (never read by a shell as anything but a word). Given `env`,
/// the job runs with that environment alone (`env -i`), in place of the
/// guest's.
pub fn job_script(argv: &[String], env: Option<&[(String, String)]>) -> String {
    let run = match env {
        Some(vars) => {
            // `--` before the variables: a name may start with `-`. The
            // program (fslab's path in the share) holds no `=`.
            let mut words = vec!["env".to_string(), "-i".to_string(), "--".to_string()];
            words.extend(vars.iter().map(|(name, value)| format!("{name}={value}")));
            words.extend(argv.iter().cloned());
            words
        }
        None => argv.to_vec(),
    };
    format!(
        "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root\ncd /tmp\nexec {}\n",
        shell_words::join(run)
    )
}

/// Whether the ELF at `bytes` is statically linked (has no `PT_INTERP`):
/// the initramfs holds no C library.
pub fn is_static_elf(bytes: &[u8]) -> bool {
    if !bytes.starts_with(b"\x7fELF") || bytes.get(4) != Some(&2) {
        return false;
    }
    let (Some(phoff), Some(entsize), Some(count)) = (le64(bytes, 0x20), le16(bytes, 0x36), le16(bytes, 0x38)) else {
        return false;
    };
    (0..u64::from(count)).all(|i| le32(bytes, (phoff + i * u64::from(entsize)) as usize) != Some(3))
}

/// Write the initramfs for `modules` (read when the kernel was prepared)
/// with the static busybox at `busybox` into `file` (empty, made and
/// ledgered by the caller; `out` is its path, for messages); returns its
/// size in bytes.
pub fn write(file: File, out: &Path, busybox: &Path, modules: &[Loaded], log_share: bool) -> Result<u64> {
    let busybox_bytes = std::fs::read(busybox).map_err(|e| {
        Error::environment(format!("{}: cannot read busybox ({e}); install busybox-static", busybox.display()))
    })?;
    if !is_static_elf(&busybox_bytes) {
        return Err(Error::environment(format!(
            "{}: busybox is dynamically linked, and the guest's initramfs has no C library; install busybox-static",
            busybox.display()
        )));
    }
    let io = |e| Error::io(out, "write the initramfs", e);
    let mut cpio = CpioWriter::new(BufWriter::new(file));
    for dir in ["bin", "dev", "proc", "sys", "modules"] {
        cpio.dir(dir, 0o755).map_err(io)?;
    }
    cpio.file("bin/busybox", 0o755, &busybox_bytes).map_err(io)?;
    let names: Vec<String> = modules.iter().map(|m| m.name.clone()).collect();
    cpio.file("init", 0o755, init_script(&names, log_share).as_bytes()).map_err(io)?;
    for module in modules {
        cpio.file(&format!("modules/{}.ko", module.name), 0o644, &module.bytes).map_err(io)?;
    }
    let writer = cpio.finish().map_err(io)?;
    let file = writer.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    Ok(file.metadata().map_err(io)?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_script_loads_in_order_and_runs_the_job_in_the_overlay() {
        let script = init_script(&["crc32c_generic".into(), "ext4".into()], false);
        assert!(!script.contains(LOG_TAG));
        let logged = init_script(&[], true);
        assert!(logged.contains("mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,ro,cache=none fslablog /newroot/fslab-log"));
        assert!(script.contains("for m in crc32c_generic ext4; do insmod /modules/$m.ko"));
        assert!(script.contains("mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,ro fslabroot /lower"));
        assert!(script.contains("chroot /newroot /bin/sh /fslab-out/job > /newroot/fslab-out/stdout"));
        assert!(script.contains("for d in /tmp /run /var/tmp; do mount -t tmpfs"));
        assert!(script.trim_end().ends_with("poweroff -f"));
    }

    #[test]
    fn the_job_quotes_every_argument() {
        let argv = ["/usr/bin/fslab".into(), "run".into(), "a b".into(), "it's;rm -rf /".into()];
        let job = job_script(&argv, None);
        assert!(job.ends_with("exec /usr/bin/fslab run 'a b' 'it'\\''s;rm -rf /'\n"), "{job}");
        let env = [("PATH".to_string(), "/opt/x bin:/usr/bin".to_string()), ("ODD".to_string(), "a'b\nc".to_string())];
        let job = job_script(&argv, Some(&env));
        assert!(
            job.ends_with(
                "exec env -i -- 'PATH=/opt/x bin:/usr/bin' 'ODD=a'\\''b\nc' /usr/bin/fslab run 'a b' 'it'\\''s;rm -rf /'\n"
            ),
            "{job}"
        );
    }

    #[test]
    fn only_a_static_busybox_serves() {
        let dir = crate::test_temp::dir("");
        let out = dir.path().join("initramfs.cpio");
        // The host's own fslab is dynamically linked.
        let me = std::env::current_exe().unwrap();
        let err = write(File::create(&out).unwrap(), &out, &me, &[], false).unwrap_err();
        assert!(err.message.contains("busybox-static"), "{}", err.message);
        for busybox in ["/bin/busybox", "/usr/bin/busybox"] {
            let bytes = std::fs::read(busybox).unwrap_or_default();
            if is_static_elf(&bytes) {
                let size = write(File::create(&out).unwrap(), &out, Path::new(busybox), &[], false).unwrap();
                assert!(size > bytes.len() as u64);
                return;
            }
        }
        eprintln!("skipped the archive: no static busybox here");
    }
}
