//! A scenario's kept extent maps: each drawn as a strip inlined in the
//! page, or listed by path and extent count.
//!
//! The design decision: the page has a strip budget ([`super::MAX_STRIPS`]),
//! spent in section order on the first repeat of each group that kept
//! maps; other repeats and anything past the budget are listed, not
//! drawn, so the page stays bounded however many cases it shows.

use std::fmt::{self, Write as _};

use super::section::Group;
use super::{Page, escape, plural};
use crate::record::extent::continues_filefrag;
use crate::record::{Case, KeptMap};
use crate::report::markup::shorten;
use crate::report::strip::StripBuilder;
use crate::units::bytes;

impl Page<'_> {
    /// The kept extent maps: every map of each group's first repeat that
    /// kept any (other repeats listed by path and extent count), while
    /// the page's strip budget lasts.
    pub(super) fn write_maps(&mut self, out: &mut String, groups: &[Group]) -> fmt::Result {
        writeln!(out, "<h3>Extent maps</h3>")?;
        if groups.iter().all(|g| g.cases.iter().all(|c| c.maps.is_empty())) {
            writeln!(
                out,
                r#"<p class="note">No case left a file in more than one extent, so no map was kept.</p>"#
            )?;
            return Ok(());
        }
        writeln!(
            out,
            r#"<p class="note">The most fragmented files each case left. File offset runs left to right; colour is the place on the device; marks above the strip are jumps between extents.</p>"#
        )?;
        for group in groups {
            let Some(first) = group.cases.iter().position(|c| !c.maps.is_empty()) else { continue };
            for map in &group.cases[first].maps {
                if self.strips_left == 0 {
                    write_map_row(out, group, group.cases[first], map, "not drawn: the page's strip budget is spent")?;
                    continue;
                }
                self.strips_left -= 1;
                write_strip(out, group, group.cases[first], map)?;
            }
            let others: Vec<(&Case, &KeptMap)> =
                group.cases[first + 1..].iter().flat_map(|c| c.maps.iter().map(move |m| (*c, m))).collect();
            if !others.is_empty() {
                writeln!(out, r#"<ul class="maps-not-drawn">"#)?;
                for (case, map) in others {
                    write_map_row(out, group, case, map, "")?;
                }
                writeln!(out, "</ul>")?;
            }
        }
        Ok(())
    }
}

/// One kept map as an extent strip, inlined, with its numbers on the
/// wrapping `<figure>`.
fn write_strip(out: &mut String, group: &Group, case: &Case, map: &KeptMap) -> fmt::Result {
    let mut title = format!("{} — {}, {}", map.path, group.label(), plural(map.extents as usize, "extent", "extents"));
    if map.truncated {
        let _ = write!(title, " (first {} records kept)", map.extent_list.len());
    }
    let mut strip = StripBuilder::new(map.size, map.device_bytes, title);
    let mut previous = None;
    for extent in &map.extent_list {
        // The first record always starts an extent; the builder knows.
        let starts = previous.is_none() || !continues_filefrag(previous, extent);
        strip.add(extent, starts);
        previous = Some(extent);
    }
    writeln!(
        out,
        r#"<figure class="strip" data-scenario="{}" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}" data-records="{}" data-truncated="{}">"#,
        escape(&case.scenario),
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        map.extent_list.len(),
        map.truncated
    )?;
    writeln!(
        out,
        "<figcaption><b>{}</b> · repeat {} · <code>{}</code> · {} · {}</figcaption>",
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&bytes(map.size)),
        escape(&plural(map.extents as usize, "extent", "extents")),
    )?;
    writeln!(out, "{}", inline_svg(&strip.finish()))?;
    writeln!(out, "</figure>")
}

/// A kept map listed, not drawn.
fn write_map_row(out: &mut String, group: &Group, case: &Case, map: &KeptMap, why: &str) -> fmt::Result {
    let why = if why.is_empty() { String::new() } else { format!(" — {why}") };
    writeln!(
        out,
        r#"<li class="map" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}">{} · repeat {} · <code>{}</code> · {}{}</li>"#,
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&plural(map.extents as usize, "extent", "extents")),
        escape(&why)
    )
}

/// A standalone SVG document made fit to sit in HTML: no XML prolog or
/// doctype, and no namespace declarations (the HTML parser puts `<svg>`
/// in the SVG namespace itself, and the page must name no URL).
fn inline_svg(document: &[u8]) -> String {
    let text = String::from_utf8_lossy(document);
    let mut rest: &str = &text;
    while let Some(start) = rest.find('<') {
        let tail = &rest[start..];
        if tail.starts_with("<?") || tail.starts_with("<!") {
            rest = tail.find('>').map_or("", |end| &tail[end + 1..]);
        } else {
            rest = tail;
            break;
        }
    }
    let Some(tag_end) = rest.find('>') else { return String::new() };
    let (open, body) = rest.split_at(tag_end);
    let mut kept = String::with_capacity(open.len());
    let mut attrs = open;
    // Drop every ` xmlns="..."` and ` xmlns:x="..."` of the root tag.
    while let Some(at) = attrs.find(" xmlns") {
        kept.push_str(&attrs[..at]);
        let after = &attrs[at + 1..];
        let skip = after.find('"').and_then(|q| after[q + 1..].find('"').map(|e| q + e + 2)).unwrap_or(after.len());
        attrs = &after[skip..];
    }
    kept.push_str(attrs);
    format!("{kept}{}", body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_documents_lose_prolog_and_namespaces() {
        let inlined = inline_svg(b"<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"2\"><rect/></svg>\n");
        assert_eq!(inlined, "<svg width=\"2\"><rect/></svg>");
    }
}
