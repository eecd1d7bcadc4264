//! Which `--mkfs-opt` and `--mount-opt` words fslab passes on: nothing
//! that names a device or a path outside the target, and mount options the
//! kernel itself accepts — all checked before anything is made.
//!
//! The design decision: mkfs arguments go through an *allow-list* per tool
//! of option letters (and, for options that take `key=value,...` lists,
//! of keys) known to act only on the device being formatted. A deny-list
//! would have to know every path- or device-taking option of every mkfs
//! version (mke2fs `-d`, `-l`, `-z`, `-J device=`; mkfs.xfs `-p`, `-c`,
//! `-l logdev=`, `-r rtdev=`, `-d name=`; a second device word for
//! mkfs.btrfs...), and a new version would slip past it. The tools are
//! parsed as getopt would parse them (clustered short flags, an argument
//! glued on or in the next word), so a word cannot hide an option.
//!
//! Mount options are checked the other way round, because the kernel's own
//! parser is the exact list of what exists: the words that name another
//! device or file (`logdev=`, `rtdev=`, `device=`, `journal_path=`,
//! `journal_dev=`, and mount(8)'s `loop=`, `source=`, `X-mount.*`...) are
//! refused here, and every other word is handed to the kernel through the
//! new mount API (`fsopen` + `fsconfig`, no device, nothing mounted), which
//! refuses an unknown or malformed option with its own log line — the
//! message a failed mount would only have left in dmesg. Checks the kernel
//! makes only when it reads the superblock (`data=journal` on ext2) still
//! surface at the real mount.

mod mount;

pub use mount::{check_mount_opts, context_log, kernel_accepts, lines_about};

use super::FsType;

/// What a mkfs option does with the word after it.
#[derive(Clone, Copy)]
enum Takes {
    /// Nothing: a flag.
    Nothing,
    /// A plain value (a size, a number, a label, a feature list).
    Value,
    /// A comma-separated `key[=value]` list whose keys must be among these.
    Keys(&'static [&'static str]),
}

/// One option a mkfs tool may be given.
struct Allowed {
    short: Option<char>,
    long: Option<&'static str>,
    takes: Takes,
}

const fn short(c: char, takes: Takes) -> Allowed {
    Allowed { short: Some(c), long: None, takes }
}

const fn both(c: char, long: &'static str, takes: Takes) -> Allowed {
    Allowed { short: Some(c), long: Some(long), takes }
}

const fn long(name: &'static str, takes: Takes) -> Allowed {
    Allowed { short: None, long: Some(name), takes }
}

/// mke2fs (`mkfs.ext2/3/4`): every option that formats only the device.
/// Left out: `-c`/`-l` (bad-block scans and lists from a file), `-d` (copies
/// a directory in), `-z` (an undo file at a path), `-S`, `-n`, `-V`, `-R`.
const MKE2FS: &[Allowed] = &[
    short('b', Takes::Value),
    short('C', Takes::Value),
    short('D', Takes::Nothing),
    short('e', Takes::Value),
    short(
        'E',
        Takes::Keys(&[
            "stride",
            "stripe_width",
            "stripe-width",
            "resize",
            "packed_meta_blocks",
            "lazy_itable_init",
            "lazy_journal_init",
            "assume_storage_prezeroed",
            "root_owner",
            "discard",
            "nodiscard",
            "quotatype",
            "num_backup_sb",
            "test_fs",
            "orphan_file_size",
            "hash_seed",
            "encoding",
            "encoding_flags",
            "mmp_update_interval",
            "offset",
        ]),
    ),
    short('F', Takes::Nothing),
    short('g', Takes::Value),
    short('G', Takes::Value),
    short('i', Takes::Value),
    short('I', Takes::Value),
    short('j', Takes::Nothing),
    // Not `device=`: an external journal on another device.
    short('J', Takes::Keys(&["size", "fast_commit_size", "location"])),
    short('K', Takes::Nothing),
    short('L', Takes::Value),
    short('m', Takes::Value),
    short('M', Takes::Value),
    short('N', Takes::Value),
    short('o', Takes::Value),
    short('O', Takes::Value),
    short('q', Takes::Nothing),
    short('r', Takes::Value),
    short('t', Takes::Value),
    short('T', Takes::Value),
    short('U', Takes::Value),
    short('v', Takes::Nothing),
];

/// mkfs.xfs: every section's keys except those naming another device or
/// file (`logdev`, `rtdev`, `name`, `file`). Left out: `-p` (a protofile),
/// `-c` (a config file), `-N`, `-V`.
const MKFS_XFS: &[Allowed] = &[
    short('b', Takes::Keys(&["size"])),
    short(
        'd',
        Takes::Keys(&[
            "agcount",
            "agsize",
            "cowextsize",
            "daxinherit",
            "extszinherit",
            "noalign",
            "projinherit",
            "rtinherit",
            "size",
            "su",
            "sunit",
            "sw",
            "swidth",
            "concurrency",
        ]),
    ),
    short('f', Takes::Nothing),
    short('i', Takes::Keys(&["align", "maxpct", "perblock", "size", "attr", "projid32bit", "sparse", "nrext64", "exchange"])),
    short('K', Takes::Nothing),
    short('l', Takes::Keys(&["agnum", "internal", "size", "version", "su", "sunit", "lazy-count", "concurrency"])),
    short('L', Takes::Value),
    short(
        'm',
        Takes::Keys(&[
            "crc", "finobt", "uuid", "rmapbt", "reflink", "inobtcount", "bigtime", "nrext64", "exchange", "parent",
            "metadir", "autofsck",
        ]),
    ),
    short('n', Takes::Keys(&["size", "version", "ftype", "parent"])),
    short('q', Takes::Nothing),
    short('r', Takes::Keys(&["extsize", "size", "noalign", "rtgroups", "rgcount", "rgsize", "zoned", "start", "reserved"])),
    short('s', Takes::Keys(&["size"])),
];

/// mkfs.btrfs: one device only (any other word would be a second device
/// of the file system). Left out: `-r`/`--rootdir`, `--subvol`,
/// `--inode-flags`, `--shrink`, `--compress` (they copy a directory in).
const MKFS_BTRFS: &[Allowed] = &[
    both('b', "byte-count", Takes::Value),
    long("csum", Takes::Value),
    long("checksum", Takes::Value),
    both('d', "data", Takes::Value),
    both('f', "force", Takes::Nothing),
    both('K', "nodiscard", Takes::Nothing),
    both('L', "label", Takes::Value),
    both('m', "metadata", Takes::Value),
    both('M', "mixed", Takes::Nothing),
    both('n', "nodesize", Takes::Value),
    both('O', "features", Takes::Value),
    both('q', "quiet", Takes::Nothing),
    both('R', "runtime-features", Takes::Value),
    both('s', "sectorsize", Takes::Value),
    both('U', "uuid", Takes::Value),
    long("device-uuid", Takes::Value),
    both('v', "verbose", Takes::Nothing),
];

fn allowed(fs: FsType) -> &'static [Allowed] {
    match fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => MKE2FS,
        FsType::Xfs => MKFS_XFS,
        FsType::Btrfs => MKFS_BTRFS,
    }
}

/// The allowed options of `fs`'s mkfs, for the message that refuses one.
fn allowed_list(fs: FsType) -> String {
    let names: Vec<String> = allowed(fs)
        .iter()
        .map(|a| match (a.short, a.long) {
            (Some(c), _) => format!("-{c}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => String::new(),
        })
        .collect();
    names.join(" ")
}

/// Check the extra mkfs arguments for `fs` (already split into words):
/// every word an allowed option or its value. The error says which word
/// and why; the caller adds the flag.
pub fn check_mkfs_args(fs: FsType, words: &[String]) -> std::result::Result<(), String> {
    let table = allowed(fs);
    let tool = fs.mkfs();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if word == "--" {
            return Err(format!("`--`: what follows it {tool} takes as devices; fslab gives the one device itself"));
        }
        if let Some(name) = word.strip_prefix("--") {
            let (name, glued) = match name.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (name, None),
            };
            let Some(option) = table.iter().find(|a| a.long == Some(name)) else {
                return Err(unknown(fs, &format!("--{name}")));
            };
            match (option.takes, glued) {
                (Takes::Nothing, Some(_)) => return Err(format!("`{word}`: --{name} takes no value")),
                (Takes::Nothing, None) => {}
                (takes, Some(value)) => check_value(&tool, word, takes, &value)?,
                (takes, None) => {
                    let value = words.get(i).ok_or_else(|| format!("`{word}` needs a value"))?;
                    i += 1;
                    check_value(&tool, word, takes, value)?;
                }
            }
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Err(format!(
                "`{word}` is not an option: {tool} would take it as {}; fslab formats only the device it made or was given",
                if fs == FsType::Btrfs { "another device to add to the file system" } else { "the device or its size" }
            ));
        };
        for (at, c) in cluster.char_indices() {
            let Some(option) = table.iter().find(|a| a.short == Some(c)) else {
                return Err(unknown(fs, &format!("-{c}")));
            };
            if let Takes::Nothing = option.takes {
                continue;
            }
            let rest = &cluster[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                let value = words.get(i).ok_or_else(|| format!("`-{c}` needs a value"))?;
                i += 1;
                value.as_str()
            } else {
                rest
            };
            check_value(&tool, &format!("-{c}"), option.takes, value)?;
            break;
        }
    }
    Ok(())
}

fn unknown(fs: FsType, word: &str) -> String {
    let why = match (fs, word) {
        (FsType::Ext2 | FsType::Ext3 | FsType::Ext4, "-d") => "it copies a directory from outside the target in",
        (FsType::Ext2 | FsType::Ext3 | FsType::Ext4, "-l") => "it reads a bad-block list from a file",
        (FsType::Ext2 | FsType::Ext3 | FsType::Ext4, "-c") => "it scans the device for bad blocks (a fresh image has none)",
        (FsType::Ext2 | FsType::Ext3 | FsType::Ext4, "-z") => "it writes an undo file at a path",
        (FsType::Xfs, "-p") => "it reads a protofile and copies files in",
        (FsType::Xfs, "-c") => "it reads a configuration file",
        (FsType::Btrfs, "-r" | "--rootdir" | "--subvol" | "--inode-flags" | "--shrink" | "--compress") => {
            "it copies a directory from outside the target in"
        }
        _ => "it is not one fslab knows to act only on the device it formats",
    };
    format!("`{word}`: fslab does not pass this to {}: {why} (allowed: {})", fs.mkfs(), allowed_list(fs))
}

/// Check the value of option `option`: a `key=value` list's keys must be
/// allowed ones.
fn check_value(tool: &str, option: &str, takes: Takes, value: &str) -> std::result::Result<(), String> {
    let Takes::Keys(keys) = takes else { return Ok(()) };
    for item in value.split(',').filter(|s| !s.is_empty()) {
        let key = item.split_once('=').map_or(item, |(k, _)| k);
        if !keys.contains(&key) {
            let why = match key {
                "device" | "logdev" | "rtdev" => "it puts part of the file system on another device",
                "name" | "file" => "it names a file instead of the device",
                _ => "it is not one fslab knows to act only on the device it formats",
            };
            return Err(format!(
                "`{option} {value}`: fslab does not pass `{key}` to {tool}: {why} (allowed keys: {})",
                keys.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        shell_words::split(text).unwrap()
    }

    fn mkfs(fs: FsType, text: &str) -> std::result::Result<(), String> {
        check_mkfs_args(fs, &words(text))
    }

    #[test]
    fn ordinary_mkfs_arguments_pass() {
        assert_eq!(mkfs(FsType::Ext2, "-b 1024"), Ok(()));
        assert_eq!(mkfs(FsType::Ext4, "-b4096 -O ^has_journal -E stride=16,stripe_width=32 -J size=64"), Ok(()));
        assert_eq!(mkfs(FsType::Ext4, "-qF -I 256 -E root_owner=0:0"), Ok(()));
        assert_eq!(mkfs(FsType::Xfs, "-b size=4096 -m crc=1,reflink=0 -l size=16m,lazy-count=1 -d agcount=4"), Ok(()));
        assert_eq!(mkfs(FsType::Btrfs, "-n 16k --csum xxhash -O no-holes --data=single -M"), Ok(()));
    }

    #[test]
    fn words_that_name_another_device_or_path_are_refused() {
        for (fs, text) in [
            (FsType::Btrfs, "/dev/loop7"),
            (FsType::Btrfs, "-f /dev/loop7"),
            (FsType::Btrfs, "-r /etc"),
            (FsType::Btrfs, "--rootdir=/etc"),
            (FsType::Btrfs, "--root /etc"),
            (FsType::Xfs, "-l logdev=/dev/loop7,size=64m"),
            (FsType::Xfs, "-lsize=64m,logdev=/dev/loop7"),
            (FsType::Xfs, "-r rtdev=/dev/loop7"),
            (FsType::Xfs, "-d name=/tmp/x"),
            (FsType::Xfs, "-p /etc/proto"),
            (FsType::Xfs, "-c options=/tmp/x.conf"),
            (FsType::Ext4, "-J device=/dev/loop7"),
            (FsType::Ext4, "-qJ device=/dev/loop7"),
            (FsType::Ext4, "-d /etc"),
            (FsType::Ext4, "-qd/etc"),
            (FsType::Ext3, "-l /tmp/badblocks"),
            (FsType::Ext2, "-c"),
            (FsType::Ext2, "-z /tmp/undo"),
            (FsType::Ext2, "-- /dev/loop7"),
            (FsType::Ext2, "-"),
        ] {
            assert!(mkfs(fs, text).is_err(), "{fs} {text} passed");
        }
        let e = mkfs(FsType::Xfs, "-l logdev=/dev/loop7,size=64m").unwrap_err();
        assert!(e.contains("logdev") && e.contains("another device"), "{e}");
        let e = mkfs(FsType::Btrfs, "/dev/loop7").unwrap_err();
        assert!(e.contains("/dev/loop7") && e.contains("another device"), "{e}");
        let e = mkfs(FsType::Ext4, "-d /etc").unwrap_err();
        assert!(e.contains("-d") && e.contains("allowed: -b"), "{e}");
    }

    #[test]
    fn a_missing_value_is_refused() {
        assert!(mkfs(FsType::Ext4, "-b").unwrap_err().contains("needs a value"));
        assert!(mkfs(FsType::Btrfs, "--nodesize").unwrap_err().contains("needs a value"));
        assert!(mkfs(FsType::Btrfs, "--mixed=1").unwrap_err().contains("takes no value"));
    }
}
