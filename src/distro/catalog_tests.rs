//! Tests of `catalog.rs` on `apt-cache show`'s text as captured from
//! Debian 12's lists (`testdata/apt-cache-show.txt`: two 6.1 builds, four
//! 6.12 ones, a cloud flavour and a metapackage).

use super::*;

const SHOWN: &str = include_str!("testdata/apt-cache-show.txt");

#[test]
fn the_plain_flavour_of_versioned_abis_is_kept_in_debian_order() {
    let catalog = Catalog::parse(SHOWN);
    let names: Vec<&str> = catalog.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["6.1.0-55", "6.1.0-57", "6.12.57+deb12", "6.12.90+deb12", "6.12.90+deb12.1", "6.12.100+deb12"]);
    let (at, newest_6_1) = catalog.named("6.1.0-57").unwrap();
    assert_eq!(at, 1);
    assert_eq!(
        newest_6_1,
        &Package {
            name: "6.1.0-57".into(),
            package: "linux-image-6.1.0-57-amd64".into(),
            version: "6.1.192-3".into(),
            size_bytes: 70591024,
            sha256: "14d219d01e1283261817d961dbb3895cb5b4288d0de10e0ba0632a0d993e15bf".into(),
            filename: "pool/updates/main/l/linux-signed-amd64/linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb".into(),
        }
    );
    assert_eq!(newest_6_1.release(), "6.1.0-57-amd64");
    assert_eq!(catalog.named("6.12.90+deb12.1").unwrap().1.version, "6.12.90-2~bpo12+1");
    assert!(catalog.named("6.1.0-56-cloud").is_none() && catalog.named("6.12").is_none());
}

#[test]
fn a_package_listed_twice_keeps_its_highest_version_and_a_partial_stanza_is_skipped() {
    let sha = "ab".repeat(32);
    let older =
        format!("Package: linux-image-6.1.0-57-amd64\nVersion: 6.1.192-2\nFilename: pool/old.deb\nSize: 1\nSHA256: {sha}\n");
    let partial = "Package: linux-image-6.1.0-58-amd64\nVersion: 6.1.193-1\nSize: 5\n";
    let text = format!("{older}\n{SHOWN}\n{partial}\n{older}");
    let catalog = Catalog::parse(&text);
    let newest = catalog.named("6.1.0-57").unwrap().1;
    assert_eq!(newest.version, "6.1.192-3", "the higher version wins, whichever stanza comes first");
    assert!(catalog.named("6.1.0-58").is_none(), "no SHA256, no Filename: not a package to fetch");
    assert_eq!(catalog.packages.len(), 6);
}

#[test]
fn only_versioned_abis_of_the_plain_flavour_are_names() {
    for (package, abi) in [
        ("linux-image-6.1.0-50-amd64", Some("6.1.0-50")),
        ("linux-image-6.12.57+deb12-amd64", Some("6.12.57+deb12")),
        ("linux-image-6.12.90+deb12.1-amd64", Some("6.12.90+deb12.1")),
        ("linux-image-6.1.0-50-cloud-amd64", None),
        ("linux-image-6.12.57+deb12-rt-amd64", None),
        ("linux-image-6.12-amd64", None),
        ("linux-image-amd64", None),
        ("linux-image-6.1.0-50-amd64-unsigned", None),
        ("linux-image-6.1.0-50-amd64-dbg", None),
        ("linux-headers-6.1.0-50-amd64", None),
        ("linux-image-6.1-50-amd64", None),
        ("linux-image-6.1.0--amd64", None),
    ] {
        assert_eq!(abi_of(package), abi, "{package}");
    }
}
