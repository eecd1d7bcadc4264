//! Debian's version order, as dpkg decides it (`dpkg --compare-versions`,
//! deb-version(7)): `[EPOCH:]UPSTREAM[-REVISION]`, compared epoch first (a
//! number), then upstream, then revision. Upstream and revision compare
//! left to right in alternating runs: a run of non-digits character by
//! character, where `~` sorts before everything (the end of the string
//! too), letters before the other characters, and the end of a run before
//! any letter; then a run of digits as a number. So `6.12.90-1~bpo12+1`
//! comes before `6.12.90-1`, which comes before `6.12.90-1+b1`, and
//! `6.1.192-3` before `6.12.43-1~bpo12+1` (1 < 12).

use std::cmp::Ordering;

/// A version split as dpkg splits it: the epoch before the first `:`
/// (0 when absent), the revision after the last `-` (empty when absent),
/// upstream between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version<'a> {
    /// The epoch (`1` of `1:2.0-3`).
    pub epoch: u64,
    /// The upstream version (`2.0`).
    pub upstream: &'a str,
    /// The Debian revision (`3`), empty for a native package.
    pub revision: &'a str,
}

impl<'a> Version<'a> {
    /// Split `text` as dpkg does. An epoch that is no number counts as 0
    /// (dpkg refuses such a version; apt's lists never hold one).
    pub fn parse(text: &'a str) -> Version<'a> {
        let text = text.trim();
        let (epoch, rest) = match text.split_once(':') {
            Some((epoch, rest)) => (epoch.parse().unwrap_or(0), rest),
            None => (0, text),
        };
        let (upstream, revision) = rest.rsplit_once('-').unwrap_or((rest, ""));
        Version { epoch, upstream, revision }
    }
}

impl Ord for Version<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.epoch
            .cmp(&other.epoch)
            .then_with(|| compare_part(self.upstream, other.upstream))
            .then_with(|| compare_part(self.revision, other.revision))
    }
}

impl PartialOrd for Version<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `a` against `b` in Debian's version order.
pub fn compare(a: &str, b: &str) -> Ordering {
    Version::parse(a).cmp(&Version::parse(b))
}

/// Where one character sorts in a non-digit run (dpkg's `order`): the end
/// of the string and a digit as 0, `~` below it, letters by their code,
/// anything else after every letter.
fn weight(c: Option<u8>) -> i32 {
    match c {
        None => 0,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => i32::from(c),
        Some(b'~') => -1,
        Some(c) => i32::from(c) + 256,
    }
}

/// One part (upstream or revision) against another: dpkg's `verrevcmp`.
fn compare_part(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let digit = |s: &[u8], i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while (i < a.len() && !digit(a, i)) || (j < b.len() && !digit(b, j)) {
            let (wa, wb) = (weight(a.get(i).copied()), weight(b.get(j).copied()));
            if wa != wb {
                return wa.cmp(&wb);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let mut first_difference = Ordering::Equal;
        while digit(a, i) && digit(b, j) {
            if first_difference == Ordering::Equal {
                first_difference = a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
        if digit(a, i) {
            return Ordering::Greater;
        }
        if digit(b, j) {
            return Ordering::Less;
        }
        if first_difference != Ordering::Equal {
            return first_difference;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs in Debian's order (the first sorts before the second), most
    /// of them versions of Debian 12's kernel packages as apt lists them.
    const ASCENDING: &[(&str, &str)] = &[
        ("6.1.170-3", "6.1.172-1"),
        ("6.1.192-1", "6.1.192-2"),
        ("6.1.192-3", "6.12.43-1~bpo12+1"),
        ("6.12.57-1~bpo12+1", "6.12.69-1~bpo12+1"),
        ("6.12.90-1~bpo12+1", "6.12.90-2~bpo12+1"),
        ("6.12.95-1~bpo12+1", "6.12.100-1~deb12u1"),
        ("6.12.100-1~bpo12+1", "6.12.100-1~deb12u1"),
        ("6.12.57-1~bpo12+1", "6.12.57-1"),
        ("6.12.57-1", "6.12.57-1+b1"),
        ("6.12.57-1~bpo12+1", "6.12.57-1~bpo12+2"),
        ("6.12.9-1", "6.12.10-1"),
        ("1.0~rc1", "1.0"),
        ("1.0~~", "1.0~"),
        ("1.0", "1.0a"),
        ("1.0a", "1.0+"),
        ("1.0+dfsg", "1.0.1"),
        ("2.0", "1:0.1"),
        ("1.0-1", "1.0-1.1"),
        ("0.9", "0.10"),
        ("1.0-9", "1.0-10"),
    ];

    /// Pairs dpkg holds equal, though their text differs.
    const EQUAL: &[(&str, &str)] =
        &[("1.0", "1.0-0"), ("0:6.1.192-3", "6.1.192-3"), ("1.002", "1.2"), ("6.12.057-1", "6.12.57-1")];

    #[test]
    fn versions_split_as_dpkg_splits_them() {
        assert_eq!(Version::parse("1:6.12.90-1~bpo12+1"), Version { epoch: 1, upstream: "6.12.90", revision: "1~bpo12+1" });
        assert_eq!(Version::parse("6.1.0-2-1"), Version { epoch: 0, upstream: "6.1.0-2", revision: "1" });
        assert_eq!(Version::parse("2.30"), Version { epoch: 0, upstream: "2.30", revision: "" });
    }

    #[test]
    fn debian_kernel_versions_sort_in_debian_order() {
        for (a, b) in ASCENDING {
            assert_eq!(compare(a, b), Ordering::Less, "{a} < {b}");
            assert_eq!(compare(b, a), Ordering::Greater, "{b} > {a}");
        }
        for (a, b) in EQUAL {
            assert_eq!(compare(a, b), Ordering::Equal, "{a} = {b}");
        }
        let mut versions = vec!["6.12.100-1~deb12u1", "6.1.192-3", "6.12.90-2~bpo12+1", "6.12.43-1~bpo12+1", "6.12.90-1~bpo12+1"];
        versions.sort_by(|a, b| compare(a, b));
        assert_eq!(versions, ["6.1.192-3", "6.12.43-1~bpo12+1", "6.12.90-1~bpo12+1", "6.12.90-2~bpo12+1", "6.12.100-1~deb12u1"]);
    }

    #[test]
    fn dpkg_agrees_with_every_pair() {
        let dpkg = |a: &str, op: &str, b: &str| {
            std::process::Command::new("dpkg").args(["--compare-versions", a, op, b]).status().map(|s| s.success())
        };
        if dpkg("1", "eq", "1").is_err() {
            eprintln!("skipped: no dpkg here to compare with");
            return;
        }
        for (a, b) in ASCENDING {
            assert!(dpkg(a, "lt", b).unwrap(), "dpkg does not say {a} < {b}");
            assert!(dpkg(b, "gt", a).unwrap(), "dpkg does not say {b} > {a}");
        }
        for (a, b) in EQUAL {
            assert!(dpkg(a, "eq", b).unwrap(), "dpkg does not say {a} = {b}");
        }
    }
}
