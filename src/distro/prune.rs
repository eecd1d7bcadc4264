//! A Debian kernel's module tree pruned to what guests load: the file
//! systems and what they use (`fs`, `lib`, `crypto`, `arch/x86/crypto`),
//! virtio and its block device (`drivers/virtio`, `drivers/block`), 9p
//! (`net/9p`), and every `modules.*` file at the tree's top, which lies
//! outside `kernel/`. Tens of MB instead of about 430; the same rule as
//! `scripts/debian-kernel.sh`'s, so the two caches hold the same trees.

use std::path::Path;

use crate::error::{Error, Result};

/// Below `lib/modules/RELEASE`: each folder, and the only entries it
/// keeps; the rest of it is removed. A folder the tree lacks is passed.
pub const KEEP: &[(&str, &[&str])] = &[
    ("kernel", &["fs", "lib", "crypto", "arch", "drivers", "net"]),
    ("kernel/arch", &["x86"]),
    ("kernel/arch/x86", &["crypto"]),
    ("kernel/drivers", &["virtio", "block"]),
    ("kernel/net", &["9p"]),
];

/// Prune the module tree `tree` (`lib/modules/RELEASE`) by [`KEEP`].
/// Nothing is followed: a symlink in the tree is removed or kept as a
/// link.
pub fn prune(tree: &Path) -> Result<()> {
    for (folder, keep) in KEEP {
        let dir = tree.join(folder);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, "read the module tree", e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, "read the module tree", e))?;
            if keep.iter().any(|k| entry.file_name() == *k) {
                continue;
            }
            remove(&entry.path())?;
        }
    }
    Ok(())
}

/// Remove `path`, a folder with all it holds or anything else, never
/// what a symlink names; absent is removed.
pub fn remove(path: &Path) -> Result<()> {
    let removed = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => Err(e),
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
    };
    removed.map_err(|e| Error::io(path, "remove", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_guests_load_is_kept() {
        let dir = crate::test_temp::dir("");
        let tree = dir.path().join("lib/modules/6.1.0-57-amd64");
        let kept = [
            "modules.builtin",
            "modules.order",
            "kernel/fs/ext4/ext4.ko",
            "kernel/lib/crc16.ko",
            "kernel/crypto/crc32c_generic.ko",
            "kernel/arch/x86/crypto/crc32c-intel.ko",
            "kernel/drivers/virtio/virtio_pci.ko",
            "kernel/drivers/block/virtio_blk.ko",
            "kernel/net/9p/9pnet_virtio.ko",
        ];
        let gone = [
            "kernel/sound/core/snd.ko",
            "kernel/arch/x86/kvm/kvm.ko",
            "kernel/arch/x86/events/rapl.ko",
            "kernel/drivers/gpu/drm/drm.ko",
            "kernel/drivers/net/virtio_net.ko",
            "kernel/net/ipv4/tcp_bbr.ko",
            "kernel/mm/hwpoison.ko",
        ];
        for file in kept.iter().chain(&gone) {
            let path = tree.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"ko").unwrap();
        }
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep-me"), b"x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("kernel/drivers/gpu-link")).unwrap();
        prune(&tree).unwrap();
        for file in kept {
            assert!(tree.join(file).is_file(), "{file} was removed");
        }
        for file in gone {
            assert!(!tree.join(file).exists(), "{file} was kept");
        }
        for folder in ["kernel/sound", "kernel/mm", "kernel/drivers/gpu", "kernel/arch/x86/kvm", "kernel/net/ipv4"] {
            assert!(!tree.join(folder).exists(), "{folder} was kept");
        }
        assert!(std::fs::symlink_metadata(tree.join("kernel/drivers/gpu-link")).is_err(), "the link is removed");
        assert!(outside.join("keep-me").is_file(), "what a link names is never touched");
    }

    #[test]
    fn a_tree_without_a_folder_of_the_rule_is_pruned_all_the_same() {
        let dir = crate::test_temp::dir("");
        std::fs::create_dir_all(dir.path().join("kernel/fs")).unwrap();
        std::fs::create_dir_all(dir.path().join("kernel/virt")).unwrap();
        prune(dir.path()).unwrap();
        assert!(dir.path().join("kernel/fs").is_dir() && !dir.path().join("kernel/virt").exists());
    }
}
