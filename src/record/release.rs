//! Kernel releases in version order: what a survey across kernels
//! (`--kernel A,B,host`) puts on its axis and in its columns.
//!
//! The one design decision: a release string (`6.1.0-57-amd64`,
//! `6.12.57+deb12-amd64`, `6.18.44`) is compared as people read it, its
//! digit runs as numbers and the text between them as text, so
//! `6.1.0-47 < 6.1.0-57 < 6.12.43 < 6.12.117 < 6.18`. This is no
//! package's version order (Debian's lives in `distro::version`, which the
//! results' readers may not name): it needs nothing but the release each
//! case recorded, whatever kernel it came from. A pre-release (`-rc2`,
//! `~rc2`) comes before its release, and a release before anything
//! longer (`6.18` before `6.18.1` and `6.18-amd64`).

use std::cmp::Ordering;

/// One run of a release string: digits, or anything else.
#[derive(Debug, PartialEq, Eq)]
enum Run<'a> {
    Number(&'a str),
    Text(&'a str),
}

/// The runs of `release` in order.
fn runs(release: &str) -> Vec<Run<'_>> {
    let mut runs = Vec::new();
    let mut start = 0;
    let bytes = release.as_bytes();
    for at in 1..=bytes.len() {
        let boundary = at == bytes.len() || bytes[at].is_ascii_digit() != bytes[at - 1].is_ascii_digit();
        if boundary {
            let part = &release[start..at];
            runs.push(if bytes[start].is_ascii_digit() { Run::Number(part) } else { Run::Text(part) });
            start = at;
        }
    }
    runs
}

/// Digit runs as numbers, however long: leading zeros dropped, then the
/// longer is larger, then the digits decide.
fn numbers(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Whether a text run starts a pre-release (`-rc`, `~`): it sorts before
/// the end of the release it belongs to.
fn pre_release(text: &str) -> bool {
    text.starts_with('~') || text.starts_with("-rc") || text.starts_with(".rc") || text.starts_with("rc")
}

/// How `a` and `b` compare as kernel releases: digit runs as numbers,
/// text as text (byte order), a pre-release before its release, a
/// release before a longer one. Strings that read as equal
/// (`6.01` and `6.1`) are then told apart by their bytes, so the order is
/// total.
pub fn release_order(a: &str, b: &str) -> Ordering {
    let (ra, rb) = (runs(a), runs(b));
    let mut i = 0;
    loop {
        let order = match (ra.get(i), rb.get(i)) {
            (None, None) => return a.cmp(b),
            (Some(Run::Text(t)), None) => return if pre_release(t) { Ordering::Less } else { Ordering::Greater },
            (None, Some(Run::Text(t))) => return if pre_release(t) { Ordering::Greater } else { Ordering::Less },
            (Some(_), None) => Ordering::Greater,
            (None, Some(_)) => Ordering::Less,
            (Some(Run::Number(x)), Some(Run::Number(y))) => numbers(x, y),
            (Some(Run::Text(x)), Some(Run::Text(y))) => match (pre_release(x), pre_release(y)) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                _ => x.cmp(y),
            },
            // A number where the other has text: `6.12` against `6.x`.
            (Some(Run::Number(_)), Some(Run::Text(_))) => Ordering::Less,
            (Some(Run::Text(_)), Some(Run::Number(_))) => Ordering::Greater,
        };
        if order != Ordering::Equal {
            return order;
        }
        i += 1;
    }
}

/// `release` without the architecture's flavour Debian names its kernels
/// with (`6.1.0-57-amd64` → `6.1.0-57`), for columns with little room.
pub fn short_release(release: &str) -> &str {
    ["-amd64", "-arm64", "-686-pae", "-686"].iter().find_map(|flavour| release.strip_suffix(flavour)).unwrap_or(release)
}

/// `X.Y.Z-N` or `X.Y.Z+SUFFIX` (SUFFIX of lowercase letters, digits and
/// dots): how Debian names one kernel build.
pub fn is_versioned_abi(abi: &str) -> bool {
    let (upstream, tail) = match abi.find(['-', '+']) {
        Some(at) => abi.split_at(at),
        None => return false,
    };
    let numbers: Vec<&str> = upstream.split('.').collect();
    let upstream_ok = numbers.len() == 3 && numbers.iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let tail_ok = match tail.split_at(1) {
        ("-", n) => !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        (_, suffix) => !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.'),
    };
    upstream_ok && tail_ok
}

/// The Debian kernel a release names (`6.1.0-52-amd64` gives `6.1.0-52`,
/// `6.12.57+deb12-amd64` gives `6.12.57+deb12`): the release of a plain
/// amd64 kernel with a versioned ABI, as `--kernel debian:NAME` takes it;
/// `None` for any other kernel.
pub fn debian_name(release: &str) -> Option<&str> {
    release.strip_suffix("-amd64").filter(|abi| is_versioned_abi(abi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(releases: &[&str]) -> Vec<String> {
        let mut sorted: Vec<String> = releases.iter().map(|r| r.to_string()).collect();
        sorted.sort_by(|a, b| release_order(a, b));
        sorted
    }

    #[test]
    fn releases_sort_with_their_numbers_as_numbers() {
        let order = ["6.1.0-47", "6.1.0-57", "6.12.43", "6.12.117", "6.18"];
        assert_eq!(sorted(&["6.12.117", "6.18", "6.1.0-57", "6.12.43", "6.1.0-47"]), order);
        for pair in order.windows(2) {
            assert_eq!(release_order(pair[0], pair[1]), Ordering::Less, "{pair:?}");
            assert_eq!(release_order(pair[1], pair[0]), Ordering::Greater, "{pair:?}");
        }
        assert_eq!(release_order("6.12.43", "6.12.43"), Ordering::Equal);
    }

    #[test]
    fn debian_and_host_releases_sort_as_their_versions() {
        let surveyed =
            ["6.18.44", "6.12.57+deb12-amd64", "6.1.0-57-amd64", "6.12.90+deb12.1-amd64", "6.12.90+deb12-amd64", "6.1.0-9-amd64"];
        assert_eq!(
            sorted(&surveyed),
            ["6.1.0-9-amd64", "6.1.0-57-amd64", "6.12.57+deb12-amd64", "6.12.90+deb12-amd64", "6.12.90+deb12.1-amd64", "6.18.44"]
        );
    }

    #[test]
    fn a_release_comes_after_its_pre_releases_and_before_longer_ones() {
        assert_eq!(
            sorted(&["6.18.1", "6.18", "6.18-rc3", "6.18-rc10", "6.18-amd64"]),
            ["6.18-rc3", "6.18-rc10", "6.18", "6.18-amd64", "6.18.1"]
        );
        assert_eq!(release_order("6.12~rc1", "6.12"), Ordering::Less);
        // Numbers of any length, and leading zeros, without overflow.
        assert_eq!(release_order("6.99999999999999999999999", "6.100000000000000000000000"), Ordering::Less);
        assert_eq!(release_order("6.01", "6.1"), Ordering::Less, "equal as numbers, told apart by their bytes");
        assert_eq!(release_order("", "6"), Ordering::Less);
    }

    #[test]
    fn the_flavour_is_left_off_a_short_release() {
        assert_eq!(short_release("6.1.0-57-amd64"), "6.1.0-57");
        assert_eq!(short_release("6.12.57+deb12-amd64"), "6.12.57+deb12");
        assert_eq!(short_release("6.18.44"), "6.18.44");
    }

    #[test]
    fn debian_kernels_are_named_as_the_archive_names_them() {
        assert_eq!(debian_name("6.1.0-52-amd64"), Some("6.1.0-52"));
        assert_eq!(debian_name("6.12.57+deb12-amd64"), Some("6.12.57+deb12"));
        assert_eq!(debian_name("6.18.3-arch1"), None);
        assert_eq!(debian_name("6.18.0-custom-amd64"), None);
    }
}
