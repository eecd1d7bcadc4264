//! What `debian:SPEC` names: one kernel, a list, a range. SPEC is a comma
//! list of items; an item is a kernel's name (the ABI of its package:
//! `6.1.0-50`, `6.12.57+deb12`), a short form that names one package
//! (its upstream version, `6.12.57` or `6.1.176`), its package version
//! (`6.1.176-1`), or a range `A..B` of such: every kernel from A to B,
//! both included, in Debian's order of package versions (`A..` runs to
//! the newest, `..B` from the oldest). `linux-image-` before a name and
//! `-amd64` after it (the release, as places print it) are taken off.
//!
//! Every mistake is a usage error (exit 2) saying what was wrong and
//! what to write: an unknown name names the nearest ones in Debian's
//! order and `fslab kernels --list debian`; a short form two packages
//! share names both; a range that runs backwards says which comes first.

use super::catalog::{Catalog, Package};
use super::version::{self, Version};
use crate::error::{Error, Result};

/// The prefix of a kernel from Debian's archive, wherever fslab takes a
/// kernel (`--kernel debian:6.1.0-50`, `fslab kernels debian:6.1.0-50`).
pub const PREFIX: &str = "debian:";

/// Where every name can be looked up: said in each message about one.
const LIST_THEM: &str = "`fslab kernels --list debian` lists what apt knows";

/// One item of a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// One kernel, by name, short form or package version.
    One(String),
    /// Every kernel from the first to the second, both included, in
    /// Debian's order; `None` is the oldest (first) or newest (second).
    Range(Option<String>, Option<String>),
}

/// A `debian:SPEC` read: what was given and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The text as given, prefix included (`debian:6.1.0-47..6.1.0-50`).
    pub given: String,
    /// Its items, in the order given.
    pub picks: Vec<Pick>,
}

impl Spec {
    /// Read `debian:SPEC`. An empty spec or item, or a name of characters
    /// no Debian version has, is a usage error.
    pub fn parse(given: &str) -> Result<Spec> {
        let spec = given.strip_prefix(PREFIX).ok_or_else(|| Error::usage(format!("{given}: not a debian:NAME")))?;
        if spec.trim().is_empty() {
            return Err(Error::usage(format!(
                "{given} names no kernel: give one as debian:6.1.0-50, a list as debian:6.1.0-50,6.12.57, a range as \
                 debian:6.1.0-47..6.1.0-57; {LIST_THEM}"
            )));
        }
        let mut picks = Vec::new();
        for item in spec.split(',').map(str::trim) {
            let pick = match item.split_once("..") {
                Some((from, to)) => Pick::Range(end(given, from)?, end(given, to)?),
                None => Pick::One(name(given, item)?),
            };
            picks.push(pick);
        }
        Ok(Spec { given: given.to_string(), picks })
    }

    /// The names of a spec that lists kernels one by one (no range), as
    /// given: what a cache may hold without asking apt.
    pub fn one_by_one(&self) -> Option<Vec<&str>> {
        self.picks
            .iter()
            .map(|p| match p {
                Pick::One(name) => Some(name.as_str()),
                Pick::Range(..) => None,
            })
            .collect()
    }

    /// The packages of `catalog` the spec names, each range in Debian's
    /// order; a kernel named twice is a usage error.
    pub fn select<'c>(&self, catalog: &'c Catalog) -> Result<Vec<&'c Package>> {
        let mut chosen: Vec<&Package> = Vec::new();
        for pick in &self.picks {
            let picked: Vec<&Package> = match pick {
                Pick::One(name) => vec![&catalog.packages[find(&self.given, catalog, name)?]],
                Pick::Range(from, to) => {
                    let first = from.as_deref().map(|n| find(&self.given, catalog, n)).transpose()?.unwrap_or(0);
                    let last = match to {
                        Some(n) => find(&self.given, catalog, n)?,
                        None => catalog.packages.len().saturating_sub(1),
                    };
                    if first > last {
                        return Err(backwards(&self.given, &catalog.packages[first], &catalog.packages[last], from, to));
                    }
                    catalog.packages[first..=last].iter().collect()
                }
            };
            for package in picked {
                if chosen.iter().any(|p| p.name == package.name) {
                    return Err(Error::usage(format!(
                        "{}: {PREFIX}{} is named twice; name each kernel once",
                        self.given, package.name
                    )));
                }
                chosen.push(package);
            }
        }
        Ok(chosen)
    }
}

/// One end of a range: `None` when open.
fn end(given: &str, text: &str) -> Result<Option<String>> {
    let text = text.trim();
    if text.is_empty() { Ok(None) } else { name(given, text).map(Some) }
}

/// A name as given, less `linux-image-` and `-amd64`; an empty one or one
/// of characters no version has is refused.
fn name(given: &str, text: &str) -> Result<String> {
    let text = text.trim();
    let bare = text.strip_prefix("linux-image-").unwrap_or(text);
    let bare = bare.strip_suffix("-amd64").unwrap_or(bare);
    if bare.is_empty() {
        return Err(Error::usage(format!(
            "{given}: an empty name in the list; separate names with one comma, as debian:6.1.0-50,6.12.57"
        )));
    }
    let fits = bare.bytes().all(|b| b.is_ascii_alphanumeric() || b".+~:-".contains(&b));
    if !fits || !bare.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(Error::usage(format!(
            "{given}: `{}` is no Debian kernel name (a name reads 6.1.0-50 or 6.12.57+deb12); {LIST_THEM}",
            crate::text::escape(text)
        )));
    }
    Ok(bare.to_string())
}

/// Where the package `name` names stands in `catalog`: its name, its
/// package version, or a short form (upstream version) one package alone
/// has.
fn find(given: &str, catalog: &Catalog, name: &str) -> Result<usize> {
    if let Some((at, _)) = catalog.named(name) {
        return Ok(at);
    }
    let by_version: Vec<usize> = (0..catalog.packages.len()).filter(|&i| catalog.packages[i].version == name).collect();
    let matching = if by_version.is_empty() {
        (0..catalog.packages.len()).filter(|&i| short_form(&catalog.packages[i]).contains(&name)).collect()
    } else {
        by_version
    };
    match matching.as_slice() {
        [one] => Ok(*one),
        [] => Err(unknown(given, catalog, name)),
        many => {
            let named: Vec<String> =
                many.iter().map(|&i| &catalog.packages[i]).map(|p| format!("{} ({})", p.name, p.version)).collect();
            let last = &catalog.packages[*many.last().expect("several")].name;
            Err(Error::usage(format!(
                "{given}: {name} names {} kernels: {}; give the whole name, as {PREFIX}{last}",
                many.len(),
                named.join(", ")
            )))
        }
    }
}

/// The short forms of a package: its name before `+` (`6.12.57` of
/// `6.12.57+deb12`) and its upstream version (`6.1.176` of `6.1.176-1`).
fn short_form(package: &Package) -> [&str; 2] {
    let before_plus = package.name.split('+').next().unwrap_or_default();
    [before_plus, Version::parse(&package.version).upstream]
}

/// An unknown name, with the kernels nearest where it would stand in
/// Debian's order: a short form among the upstream versions, anything
/// else among the names.
fn unknown(given: &str, catalog: &Catalog, name: &str) -> Error {
    let short = name.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let key = |p: &Package| {
        if short { Version::parse(&p.version).upstream.to_string() } else { p.name.clone() }
    };
    let before = catalog.packages.iter().filter(|p| version::compare(&key(p), name).is_lt()).count();
    let nearest: Vec<String> = [before.checked_sub(1), Some(before)]
        .into_iter()
        .flatten()
        .filter_map(|i| catalog.packages.get(i))
        .map(|p| format!("{PREFIX}{}", p.name))
        .collect();
    Error::usage(format!("{given}: apt knows no Debian kernel {name}; the nearest are {}; {LIST_THEM}", nearest.join(" and ")))
}

/// A range whose first end comes after its last in Debian's order.
fn backwards(given: &str, first: &Package, last: &Package, from: &Option<String>, to: &Option<String>) -> Error {
    let (from, to) = (from.as_deref().unwrap_or_default(), to.as_deref().unwrap_or_default());
    Error::usage(format!(
        "{given}: the range runs backwards: {} ({}) comes before {} ({}) in Debian's order; write {PREFIX}{to}..{from}",
        last.name, last.version, first.name, first.version
    ))
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
