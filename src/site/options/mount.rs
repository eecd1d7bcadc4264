//! Mount options: the words that name another device or file refused,
//! mount(8)'s own flags set aside, and the rest put to the kernel's own
//! parser (see the parent module for why).

use std::os::fd::AsFd;

use super::FsType;
use crate::ledger::kmsg::KernelLog;
use crate::error::{Error, Result};

/// Words mount(8) turns into mount flags itself (they never reach the
/// file system's parser): passed as they are.
const MOUNT_FLAGS: &[&str] = &[
    "defaults", "rw", "ro", "sync", "async", "dirsync", "atime", "noatime", "diratime", "nodiratime", "relatime",
    "norelatime", "strictatime", "nostrictatime", "lazytime", "nolazytime", "iversion", "noiversion", "dev", "nodev",
    "suid", "nosuid", "exec", "noexec", "symfollow", "nosymfollow", "mand", "nomand", "silent", "loud",
];

/// Why a mount option is refused without asking the kernel, if it is.
fn refused_mount_option(fs: FsType, key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("x-") {
        return Some("mount(8)'s X-mount.* options act on paths of their own");
    }
    match (fs, key) {
        (_, "loop" | "offset" | "sizelimit" | "encryption") => Some("mount(8) would set up a loop device of its own"),
        (_, "source") => Some("it names the device to mount, which fslab gives itself"),
        (FsType::Ext2 | FsType::Ext3 | FsType::Ext4, "journal_path" | "journal_dev") => {
            Some("it puts the journal on another device")
        }
        (FsType::Xfs, "logdev") => Some("it puts the log on another device"),
        (FsType::Xfs, "rtdev") => Some("it puts the realtime section on another device"),
        (FsType::Btrfs, "device") => Some("it adds another device to the file system"),
        _ => None,
    }
}

/// The options of a `-o` list that reach the file system's parser, as
/// (key, value) pairs; mount flags are left out. Refuses the words that
/// name another device or path.
pub fn check_mount_opts(fs: FsType, opts: &str) -> std::result::Result<Vec<(String, Option<String>)>, String> {
    let mut for_fs = Vec::new();
    for item in opts.split(',').filter(|s| !s.is_empty()) {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (item, None),
        };
        if let Some(why) = refused_mount_option(fs, key) {
            return Err(format!("`{item}`: fslab does not mount {fs} with it: {why}"));
        }
        if value.is_none() && MOUNT_FLAGS.contains(&key) {
            continue;
        }
        for_fs.push((key.to_string(), value));
    }
    Ok(for_fs)
}

/// Ask the kernel whether `fs` accepts `options` (from
/// [`check_mount_opts`]): an `fsopen` context, one `fsconfig` per option,
/// never a mount. On refusal the error carries the kernel's own log line.
/// Needs root; without it (or on a kernel without the new mount API) the
/// check is skipped and the real mount is the judge.
pub fn kernel_accepts(fs: FsType, options: &[(String, Option<String>)]) -> Result<()> {
    if options.is_empty() {
        return Ok(());
    }
    // Some parsers (btrfs's compression, xfs's sizes) say why in the
    // kernel log instead of the context's: read what is logged from now on.
    let mut kmsg = KernelLog::from_now();
    let context = match rustix::mount::fsopen(fs.name(), rustix::mount::FsOpenFlags::FSOPEN_CLOEXEC) {
        Ok(fd) => fd,
        // Not root, no new mount API, or no such file system here (which
        // the target's own check reports).
        Err(_) => return Ok(()),
    };
    for (key, value) in options {
        let set = match value {
            Some(v) => rustix::mount::fsconfig_set_string(context.as_fd(), key.as_str(), v.as_str()),
            None => rustix::mount::fsconfig_set_flag(context.as_fd(), key.as_str()),
        };
        if let Err(errno) = set {
            let shown = value.as_ref().map_or_else(|| key.clone(), |v| format!("{key}={v}"));
            let reason = context_log(&context)
                .or_else(|| kmsg.as_mut().and_then(|k| lines_about(k, fs, key)))
                .unwrap_or_else(|| format!("{errno}, and it logged no reason"));
            return Err(Error::usage(format!(
                "--mount-opt {fs}={shown}: the kernel refuses it: {reason} (see the mount options in `man 5 {}`; nothing was made)",
                match fs {
                    FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => "ext4",
                    FsType::Xfs => "xfs",
                    FsType::Btrfs => "btrfs",
                }
            )));
        }
    }
    Ok(())
}

/// The messages the kernel logged in an `fsopen` context, `; `-joined,
/// without their `e `/`w `/`i ` level prefixes.
pub fn context_log(context: &impl AsFd) -> Option<String> {
    let mut lines = Vec::new();
    let mut buffer = [0u8; 1024];
    // The log holds a few messages; each read takes one, ENODATA ends it.
    for _ in 0..8 {
        match rustix::io::read(context.as_fd(), &mut buffer) {
            Ok(n) if n > 0 => {
                let text = String::from_utf8_lossy(&buffer[..n]);
                let text = text.trim_end();
                lines.push(text.split_once(' ').filter(|(level, _)| level.len() == 1).map_or(text, |(_, m)| m).to_string());
            }
            _ => break,
        }
    }
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// What the kernel logged since `log` was opened about `fs` or naming
/// `key`, at warning level or worse (a mount elsewhere on the machine
/// logs at info), `; `-joined.
pub fn lines_about(log: &mut KernelLog, fs: FsType, key: &str) -> Option<String> {
    let tag = match fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => "ext",
        FsType::Xfs => "xfs",
        FsType::Btrfs => "btrfs",
    };
    let mut found = Vec::new();
    log.read_new(|level, message| {
        let lower = message.to_ascii_lowercase();
        if level <= 4 && (lower.contains(tag) || message.contains(key)) {
            found.push(message.to_string());
        }
    });
    (!found.is_empty()).then(|| found.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_options_naming_devices_are_refused_and_flags_kept_from_the_kernel_check() {
        for (fs, opts) in [
            (FsType::Xfs, "logdev=/dev/loop7"),
            (FsType::Xfs, "noatime,rtdev=/dev/loop7"),
            (FsType::Btrfs, "device=/dev/loop7"),
            (FsType::Ext4, "journal_path=/dev/loop7"),
            (FsType::Ext3, "journal_dev=1792"),
            (FsType::Ext4, "loop=/dev/loop7"),
            (FsType::Ext4, "X-mount.mkdir=/etc/x"),
            (FsType::Ext4, "source=/dev/sda"),
        ] {
            assert!(check_mount_opts(fs, opts).is_err(), "{fs} {opts} passed");
        }
        let kept = check_mount_opts(FsType::Ext4, "noatime,nodelalloc,commit=30,ro").unwrap();
        assert_eq!(kept, vec![("nodelalloc".into(), None), ("commit".into(), Some("30".into()))]);
    }

    #[test]
    fn the_kernel_refuses_a_misspelled_option_in_its_own_words() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipping: fsopen needs root");
            return;
        }
        let ok = check_mount_opts(FsType::Ext4, "nodelalloc,commit=30").unwrap();
        kernel_accepts(FsType::Ext4, &ok).unwrap();
        let bad = check_mount_opts(FsType::Ext4, "nodelaloc").unwrap();
        let e = kernel_accepts(FsType::Ext4, &bad).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.contains("nodelaloc") && e.message.contains("Unknown parameter"), "{}", e.message);
        // btrfs says why in the kernel log, not the context's.
        let bad = check_mount_opts(FsType::Btrfs, "compress=zstdd").unwrap();
        let e = kernel_accepts(FsType::Btrfs, &bad).unwrap_err();
        assert!(e.message.contains("BTRFS") && e.message.contains("zstdd"), "{}", e.message);
    }
}
