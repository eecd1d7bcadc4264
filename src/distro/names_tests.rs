//! Tests of `names.rs` on the catalog Debian 12's lists gave (names and
//! versions as apt lists them).

use super::*;
use crate::error::ErrorKind;

/// The plain-flavour kernels of Debian 12 (with backports) as apt knew
/// them, in no order.
const KNOWN: &[(&str, &str)] = &[
    ("6.12.100+deb12", "6.12.100-1~deb12u1"),
    ("6.1.0-47", "6.1.170-3"),
    ("6.1.0-48", "6.1.172-1"),
    ("6.1.0-49", "6.1.174-1"),
    ("6.1.0-50", "6.1.176-1"),
    ("6.1.0-55", "6.1.192-1"),
    ("6.1.0-56", "6.1.192-2"),
    ("6.1.0-57", "6.1.192-3"),
    ("6.12.43+deb12", "6.12.43-1~bpo12+1"),
    ("6.12.57+deb12", "6.12.57-1~bpo12+1"),
    ("6.12.69+deb12", "6.12.69-1~bpo12+1"),
    ("6.12.90+deb12.1", "6.12.90-2~bpo12+1"),
    ("6.12.90+deb12", "6.12.90-1~bpo12+1"),
    ("6.12.117+deb12", "6.12.117-1~deb12u1"),
];

fn catalog() -> Catalog {
    let stanzas: Vec<String> = KNOWN
        .iter()
        .map(|(name, version)| {
            format!(
                "Package: linux-image-{name}-amd64\nVersion: {version}\nFilename: pool/{name}.deb\nSize: 70000000\nSHA256: {}\n",
                "0".repeat(64)
            )
        })
        .collect();
    Catalog::parse(&stanzas.join("\n"))
}

fn names(spec: &str) -> Vec<String> {
    let catalog = catalog();
    Spec::parse(spec).unwrap().select(&catalog).unwrap().iter().map(|p| p.name.clone()).collect()
}

fn refused(spec: &str) -> String {
    let catalog = catalog();
    let e = Spec::parse(spec).and_then(|s| s.select(&catalog).map(|_| ())).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage, "{e}");
    e.message
}

#[test]
fn names_short_forms_and_package_versions_name_one_kernel() {
    assert_eq!(names("debian:6.1.0-50"), ["6.1.0-50"]);
    assert_eq!(names("debian:6.12.57+deb12"), ["6.12.57+deb12"]);
    assert_eq!(names("debian:6.12.57"), ["6.12.57+deb12"]);
    assert_eq!(names("debian:6.1.176"), ["6.1.0-50"], "the upstream version of one package");
    assert_eq!(names("debian:6.1.192-2"), ["6.1.0-56"], "a package version");
    assert_eq!(names("debian:6.12.90+deb12.1"), ["6.12.90+deb12.1"]);
    assert_eq!(names("debian:linux-image-6.1.0-50-amd64"), ["6.1.0-50"]);
    assert_eq!(names("debian:6.1.0-57-amd64"), ["6.1.0-57"], "the release, as places print it");
    assert_eq!(names("debian:6.12.57, 6.1.0-47"), ["6.12.57+deb12", "6.1.0-47"], "a list keeps its order");
}

#[test]
fn ranges_are_inclusive_in_debian_order_and_may_be_open() {
    assert_eq!(names("debian:6.1.0-55..6.1.0-57"), ["6.1.0-55", "6.1.0-56", "6.1.0-57"]);
    assert_eq!(names("debian:6.1.0-57..6.12.69"), ["6.1.0-57", "6.12.43+deb12", "6.12.57+deb12", "6.12.69+deb12"]);
    assert_eq!(names("debian:6.12.90+deb12..6.12.90+deb12.1"), ["6.12.90+deb12", "6.12.90+deb12.1"]);
    assert_eq!(names("debian:6.12.90+deb12.1.."), ["6.12.90+deb12.1", "6.12.100+deb12", "6.12.117+deb12"]);
    assert_eq!(names("debian:..6.1.0-48"), ["6.1.0-47", "6.1.0-48"]);
    assert_eq!(names("debian:..").len(), KNOWN.len());
    assert_eq!(names("debian:6.1.0-47..6.1.0-47"), ["6.1.0-47"]);
}

#[test]
fn a_short_form_two_packages_share_names_both() {
    let e = refused("debian:6.12.90");
    assert!(e.contains("6.12.90+deb12 (6.12.90-1~bpo12+1), 6.12.90+deb12.1 (6.12.90-2~bpo12+1)"), "{e}");
    assert!(e.contains("give the whole name, as debian:6.12.90+deb12.1"), "{e}");
    let e = refused("debian:6.1.192");
    assert!(e.contains("names 3 kernels"), "{e}");
}

#[test]
fn an_unknown_name_says_the_nearest_and_where_to_look() {
    let e = refused("debian:6.1.0-99");
    assert!(e.contains("apt knows no Debian kernel 6.1.0-99"), "{e}");
    assert!(e.contains("the nearest are debian:6.1.0-57 and debian:6.12.43+deb12"), "{e}");
    assert!(e.contains("fslab kernels --list debian"), "{e}");
    let e = refused("debian:6.12.58");
    assert!(e.contains("the nearest are debian:6.12.57+deb12 and debian:6.12.69+deb12"), "{e}");
    let e = refused("debian:6.1.0-1");
    assert!(e.contains("the nearest are debian:6.1.0-47;"), "{e}");
    let e = refused("debian:6.1.0-50..6.99");
    assert!(e.contains("apt knows no Debian kernel 6.99") && e.contains("debian:6.12.117+deb12"), "{e}");
}

#[test]
fn a_backwards_range_says_which_comes_first_and_how_to_write_it() {
    let e = refused("debian:6.12.57..6.1.0-50");
    assert!(e.contains("the range runs backwards"), "{e}");
    assert!(e.contains("6.1.0-50 (6.1.176-1) comes before 6.12.57+deb12 (6.12.57-1~bpo12+1)"), "{e}");
    assert!(e.contains("write debian:6.1.0-50..6.12.57"), "{e}");
}

#[test]
fn empty_names_odd_characters_and_repeats_are_refused() {
    assert!(refused("debian:").contains("names no kernel"));
    assert!(refused("debian:  ").contains("names no kernel"));
    assert!(refused("debian:6.1.0-50,,6.1.0-47").contains("an empty name"));
    assert!(refused("debian:6.1.0-50,").contains("an empty name"));
    assert!(refused("debian:../etc").contains("no Debian kernel name"));
    assert!(refused("debian:latest").contains("no Debian kernel name"));
    assert!(refused("debian:6.1.0-50,6.1.0-47..6.1.0-55").contains("debian:6.1.0-50 is named twice"));
}

#[test]
fn only_a_list_of_names_can_be_looked_up_without_apt() {
    assert_eq!(Spec::parse("debian:6.1.0-50,6.12.57+deb12").unwrap().one_by_one(), Some(vec!["6.1.0-50", "6.12.57+deb12"]));
    assert_eq!(Spec::parse("debian:6.1.0-50,6.1.0-47..6.1.0-49").unwrap().one_by_one(), None);
}
