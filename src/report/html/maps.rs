//! A scenario's kept extent maps: one picture per distinct layout, inlined
//! in the page, with every file of that layout listed under it.
//!
//! The design decisions:
//!
//! - Two maps are one layout when the same file was laid down at another
//!   place: equal size and extent count, and record by record the same
//!   logical offset, length and flags, with physical offsets that differ
//!   by one constant (see [`same_layout`]). Their strips are then
//!   identical, axis and caption included, because the colour scale and
//!   the jump marks are local to each file's own range on the device;
//!   only that range differs, and the caption lists it per file. Maps
//!   whose pictures merely look alike (other sizes, extents too small to
//!   see) stay apart: their axes and counts differ.
//! - A layout is drawn when a group's first repeat that kept maps has it;
//!   layouts only later repeats have are listed, not drawn.
//! - A file of more than [`SCATTER_EXTENTS`] extents is drawn as a scatter
//!   of file offset against device offset, not as a strip: past that many,
//!   a 1000-column strip is a barcode of some 100 KB, while the scatter
//!   shows the order the extents were laid in, in under 20 KB.
//! - Strips are drawn without their title line (the caption says it) and
//!   legend (drawn once above them): about 3 KB each.
//! - Pictures are bounded three ways: the page's count
//!   ([`super::MAX_STRIPS`]), each section's count ([`SECTION_PICTURES`],
//!   so a later scenario is never left without) and bytes
//!   ([`SECTION_BYTES`]). Each place's (target's) most fragmented layout
//!   gets the budget before any place's next; among those, the places
//!   where a verdict says its seed shows come first, one file system at a
//!   time, then the most fragmented files (btrfs's 31,396 extents before
//!   a 2-extent 67 KiB file); a layout past a budget is listed, not
//!   drawn. Pictures are drawn in that order, so the files that decide
//!   come first. A file in one extent is never drawn (a plain bar), only
//!   listed.

use std::cmp::Reverse;
use std::fmt::{self, Write as _};

use super::section::Group;
use super::{Page, escape, plural};
use crate::record::extent::continues_filefrag;
use crate::record::{Case, KeptMap};
use crate::report::markup::shorten;
use crate::report::strip::{ScatterChart, StripBuilder, page_legend};
use crate::units::{bytes, bytes_short};

/// Extents above which a map is drawn as a scatter instead of a strip. At
/// 64 or fewer, extents average 15 of the strip's 1000 columns or more and
/// each jump mark stands apart, so the strip can be read and counted;
/// beyond, the marks merge into a band. (A contiguous ext4 file of 8 GiB
/// is 64 records of 128 MiB but one extent, so size alone never tips it.)
pub(super) const SCATTER_EXTENTS: u64 = 64;

/// Bytes one scenario's pictures may take: with the five seeds' scenarios
/// at most 160 KiB of the megabyte a preset run's page should stay under,
/// and less in practice (files of one layout are drawn once). Room for
/// two scatters and a few strips, or a dozen strips.
const SECTION_BYTES: usize = 32 * 1024;

/// Pictures one scenario may have: six scenarios' fit the page's
/// [`super::MAX_STRIPS`], so none is starved by those before it.
const SECTION_PICTURES: usize = 8;

/// Paths a collapsed picture names in its caption; the rest are counted.
const NAMED_FILES: usize = 3;

/// Files a collapsed picture lists one per line under it.
const LISTED_FILES: usize = 60;

/// One kept map and the case and group it belongs to.
#[derive(Clone, Copy)]
struct Kept<'a> {
    group: &'a Group<'a>,
    case: &'a Case,
    map: &'a KeptMap,
    /// Whether the case is its group's first repeat that kept maps.
    first_repeat: bool,
}

impl Page<'_> {
    /// The kept extent maps: a picture per distinct layout of the groups'
    /// first repeats, while the page's and the section's budgets last;
    /// layouts only other repeats have, and any past the budgets, listed.
    pub(super) fn write_maps(&mut self, out: &mut String, groups: &[Group]) -> fmt::Result {
        writeln!(out, "<h3>Extent maps</h3>")?;
        let kept = kept_maps(groups);
        if kept.is_empty() {
            writeln!(
                out,
                r#"<p class="note">No case left a file in more than one extent, so no map was kept.</p>"#
            )?;
            return Ok(());
        }
        let layouts = distinct_layouts(&kept);
        // The places where the scenario's seed shows, by its verdicts.
        let scenario = kept[0].case.scenario.as_str();
        let verdicts = self.runs.iter().flat_map(|r| &r.verdicts).filter(|v| v.scenario == scenario);
        let showing: Vec<&str> = verdicts.flat_map(|v| &v.places).filter(|p| p.shows == Some(true)).map(|p| p.target.as_str()).collect();
        writeln!(
            out,
            r#"<p class="note">The most fragmented files each case left, one picture per layout (files laid out alike at other places drawn once, "× N"). Strips: file offset runs left to right; colour is the place within the file's own range on the device; marks above the strip are jumps between extents. Files of more than {SCATTER_EXTENTS} extents: file offset against device offset, one segment per record.</p>"#
        )?;
        // Pictures go to the budget one target at a time, each target's
        // first layout before any second, so every target gets one while
        // any can; they are written in that order.
        let order = draw_order(&layouts, &showing);
        let mut figures: Vec<Option<String>> = vec![None; layouts.len()];
        let reason = |l: &Vec<Kept>| if l[0].first_repeat { "in one extent, not drawn" } else { "another repeat's layout, not drawn" };
        let mut reasons: Vec<&str> = layouts.iter().map(reason).collect();
        let mut bytes_left = SECTION_BYTES;
        let mut pictures_left = SECTION_PICTURES;
        for &index in &order {
            if pictures_left == 0 {
                reasons[index] = "not drawn: the section's picture budget is spent";
                continue;
            }
            if self.strips_left == 0 {
                reasons[index] = "not drawn: the page's picture budget is spent";
                continue;
            }
            let mut figure = String::new();
            write_figure(&mut figure, &layouts[index])?;
            if figure.len() > bytes_left {
                reasons[index] = "not drawn: the section's picture budget is spent";
                continue;
            }
            self.strips_left -= 1;
            pictures_left -= 1;
            bytes_left -= figure.len();
            figures[index] = Some(figure);
        }
        let strips = figures.iter().flatten().filter(|f| !f.contains(r#"<svg class="scatter""#)).count();
        if strips > 0 {
            writeln!(out, r#"<div class="strip-legend">{}</div>"#, inline_svg(&page_legend()))?;
        }
        // Two pictures a row: a strip or scatter reads at half the page's
        // width, and a section's eight take half the height.
        writeln!(out, r#"<div class="maps">"#)?;
        for figure in order.iter().filter_map(|i| figures[*i].as_deref()) {
            out.push_str(figure);
        }
        writeln!(out, "</div>")?;
        let listed: Vec<usize> = (0..layouts.len()).filter(|i| figures[*i].is_none()).collect();
        if !listed.is_empty() {
            writeln!(out, r#"<ul class="maps-not-drawn">"#)?;
            for index in listed {
                write_map_row(out, &layouts[index], reasons[index])?;
            }
            writeln!(out, "</ul>")?;
        }
        Ok(())
    }
}

/// The layouts a first repeat has in more than one extent (a file in one
/// piece is a plain bar: it is listed), in the order they get the budget:
/// each place's most fragmented before any place's next, those of a
/// place in `showing` (where a verdict says the seed shows) first, among
/// those each file system's before its next (so xfs's 20,780 extents are
/// not left out by four btrfs places' 31,000), then the most extents.
fn draw_order(layouts: &[Vec<Kept>], showing: &[&str]) -> Vec<usize> {
    let mut drawable: Vec<usize> = (0..layouts.len()).filter(|&i| layouts[i][0].first_repeat && layouts[i][0].map.extents > 1).collect();
    drawable.sort_by_key(|&i| (Reverse(layouts[i][0].map.extents), i));
    let mut places: Vec<&str> = Vec::new();
    let mut classes: Vec<(usize, bool, &str)> = Vec::new();
    let mut ranked = Vec::new();
    for index in drawable {
        let Kept { group, case, map, .. } = layouts[index][0];
        let place = group.place.as_str();
        let rank = places.iter().filter(|p| **p == place).count();
        places.push(place);
        let shows = showing.contains(&place);
        let class = (rank, shows, case.fs.as_str());
        let fs_rank = classes.iter().filter(|c| **c == class).count();
        classes.push(class);
        ranked.push((rank, !shows, fs_rank, Reverse(map.extents), index));
    }
    ranked.sort();
    ranked.into_iter().map(|(.., index)| index).collect()
}

/// Every kept map of the groups, in group order, then repeat, then the
/// case's own order.
fn kept_maps<'a>(groups: &'a [Group<'a>]) -> Vec<Kept<'a>> {
    let mut kept = Vec::new();
    for group in groups {
        let first = group.cases.iter().position(|c| !c.maps.is_empty());
        for (index, case) in group.cases.iter().enumerate() {
            for map in &case.maps {
                kept.push(Kept { group, case, map, first_repeat: Some(index) == first });
            }
        }
    }
    kept
}

/// `kept` split into layouts (see [`same_layout`]), each in the order of
/// `kept`, the layouts in order of their first first-repeat member (or
/// first member, for those no first repeat has), which comes first.
fn distinct_layouts<'a>(kept: &[Kept<'a>]) -> Vec<Vec<Kept<'a>>> {
    let mut layouts: Vec<Vec<Kept<'a>>> = Vec::new();
    for item in kept {
        match layouts.iter_mut().find(|l| same_layout(l[0].map, item.map)) {
            Some(layout) => layout.push(*item),
            None => layouts.push(vec![*item]),
        }
    }
    for layout in &mut layouts {
        if let Some(at) = layout.iter().position(|k| k.first_repeat) {
            let first = layout.remove(at);
            layout.insert(0, first);
        }
    }
    // Drawn layouts in the order their drawn member appears.
    let position = |k: &Kept| kept.iter().position(|o| std::ptr::eq(o.map, k.map)).unwrap_or(usize::MAX);
    layouts.sort_by_key(|l| (!l[0].first_repeat, position(&l[0])));
    layouts
}

/// Whether `b` is `a` laid down at another place: the same size, extent
/// count and records, record by record the same logical offset, length
/// and flags, and physical offsets apart by one constant (records of
/// unknown location compared as they are).
fn same_layout(a: &KeptMap, b: &KeptMap) -> bool {
    if a.size != b.size || a.extents != b.extents || a.truncated != b.truncated || a.extent_list.len() != b.extent_list.len() {
        return false;
    }
    let (low_a, low_b) = (lowest(a), lowest(b));
    a.extent_list.iter().zip(&b.extent_list).all(|(x, y)| {
        let (known_x, known_y) = (x.location_known(), y.location_known());
        x.logical == y.logical
            && x.length == y.length
            && x.flags == y.flags
            && known_x == known_y
            && if known_x { x.physical - low_a == y.physical - low_b } else { x.physical == y.physical }
    })
}

/// The lowest device offset of `map`'s records of known location (0 when
/// none is known).
fn lowest(map: &KeptMap) -> u64 {
    map.extent_list.iter().filter(|e| e.location_known()).map(|e| e.physical).min().unwrap_or(0)
}

/// `map`'s own range on the device: its lowest byte and the end of its
/// highest record, of records of known location.
fn physical_range(map: &KeptMap) -> Option<(u64, u64)> {
    let known = map.extent_list.iter().filter(|e| e.location_known());
    let low = known.clone().map(|e| e.physical).min()?;
    let high = known.map(|e| e.physical_end()).max()?;
    Some((low, high))
}

/// Where a file lies, for captions: "device 1.21 GiB–1.3 GiB of 2 GiB",
/// or its span and start when the ends would print alike.
fn place_text(map: &KeptMap) -> String {
    let device = if map.device_bytes > 0 { format!(" of {}", bytes_short(map.device_bytes)) } else { String::new() };
    match physical_range(map) {
        None => "device place unknown".to_string(),
        Some((low, high)) => {
            let (from, to) = (bytes_short(low), bytes_short(high));
            if from == to {
                format!("device {} at {from}{device}", bytes_short(high - low))
            } else {
                format!("device {from}–{to}{device}")
            }
        }
    }
}

/// One layout's picture (a strip, or a scatter for many extents) with its
/// numbers on the wrapping `<figure>`, and the files it stands for.
fn write_figure(out: &mut String, layout: &[Kept]) -> fmt::Result {
    let Kept { group, case, map, .. } = layout[0];
    let mut title = format!("{} — {}, {}", map.path, group.label(), plural(map.extents as usize, "extent", "extents"));
    if map.truncated {
        let _ = write!(title, " (first {} records kept)", map.extent_list.len());
    }
    writeln!(
        out,
        r#"<figure class="strip" data-scenario="{}" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}" data-records="{}" data-truncated="{}" data-files="{}">"#,
        escape(&case.scenario),
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        map.extent_list.len(),
        map.truncated,
        layout.len()
    )?;
    write!(
        out,
        "<figcaption><b>{}</b> · repeat {} · <code>{}</code> · {} · {} · {}",
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&bytes(map.size)),
        escape(&plural(map.extents as usize, "extent", "extents")),
        escape(&place_text(map)),
    )?;
    if layout.len() > 1 {
        write!(out, r#"<br><b class="times">× {}</b> files with this layout: "#, layout.len())?;
        let named: Vec<String> = layout.iter().take(NAMED_FILES).map(|k| escape(&member_name(k))).collect();
        write!(out, "{}", named.join("; "))?;
        if layout.len() > NAMED_FILES {
            write!(out, " and {} more", layout.len() - NAMED_FILES)?;
        }
    }
    writeln!(out, "</figcaption>")?;
    if map.extents > SCATTER_EXTENTS {
        let span = map.size.max(map.extent_list.iter().map(|e| e.logical_end()).max().unwrap_or(0));
        let range = physical_range(map).unwrap_or((0, 1));
        let chart = ScatterChart { title: &title, span, range, records: &map.extent_list, extents: map.extents };
        writeln!(out, "{}", inline_svg(chart.render().svg.as_bytes()))?;
    } else {
        let mut strip = StripBuilder::new(map.size, map.device_bytes, title).block_size(map.block_size.into()).local_colour().for_page(false);
        let mut previous = None;
        for extent in &map.extent_list {
            // The first record always starts an extent; the builder knows.
            let starts = previous.is_none() || !continues_filefrag(previous, extent);
            strip.add(extent, starts);
            previous = Some(extent);
        }
        writeln!(out, "{}", inline_svg(&strip.finish()))?;
    }
    if layout.len() > 1 {
        writeln!(out, r#"<details class="strip-files"><summary>the {} files and where each lies</summary><ul>"#, layout.len())?;
        for kept in layout.iter().take(LISTED_FILES) {
            writeln!(
                out,
                r#"<li class="member" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}">{} · {}</li>"#,
                escape(&kept.case.fs),
                kept.case.repeat,
                escape(&kept.map.path),
                kept.map.extents,
                escape(&member_name(kept)),
                escape(&place_text(kept.map))
            )?;
        }
        if layout.len() > LISTED_FILES {
            writeln!(out, "<li>and {} more</li>", layout.len() - LISTED_FILES)?;
        }
        writeln!(out, "</ul></details>")?;
    }
    writeln!(out, "</figure>")
}

/// A file of a layout, for lists: `path (ext4 · strategy=x, repeat 2)`.
fn member_name(kept: &Kept) -> String {
    format!("{} ({}, repeat {})", shorten(&kept.map.path, 80), kept.group.label(), kept.case.repeat)
}

/// A layout listed, not drawn: its first file, and how many share it.
fn write_map_row(out: &mut String, layout: &[Kept], why: &str) -> fmt::Result {
    let Kept { group, case, map, .. } = layout[0];
    let mut notes = Vec::new();
    if layout.len() > 1 {
        notes.push(format!("× {} files with this layout", layout.len()));
    }
    if !why.is_empty() {
        notes.push(why.to_string());
    }
    let notes = if notes.is_empty() { String::new() } else { format!(" — {}", notes.join("; ")) };
    writeln!(
        out,
        r#"<li class="map" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}" data-files="{}">{} · repeat {} · <code>{}</code> · {}{}</li>"#,
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        layout.len(),
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&plural(map.extents as usize, "extent", "extents")),
        escape(&notes)
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
    use crate::record::Extent;
    use crate::record::catalog::Catalog;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;

    /// A map of `path` whose records are `(logical, physical, length)`
    /// shifted by `at` on the device, each its own extent unless it
    /// continues the one before.
    fn map(path: &str, size: u64, at: u64, records: &[(u64, u64, u64)]) -> KeptMap {
        let extent_list: Vec<Extent> =
            records.iter().map(|&(logical, physical, length)| Extent { logical, physical: physical + at, length, flags: 0 }).collect();
        let extents = extent_list.iter().enumerate().filter(|(i, e)| *i == 0 || !continues_filefrag(Some(&extent_list[i - 1]), e)).count();
        KeptMap { path: path.into(), size, block_size: 4096, device_bytes: 2 * GIB, extents: extents as u64, truncated: false, extent_list }
    }

    fn case(fs: &str, repeat: u32, maps: Vec<KeptMap>) -> Case {
        let mut case = Case::new("replace-files", fs, serde_json::Map::new(), repeat);
        case.maps = maps;
        case
    }

    /// The maps part of a section of `groups`, each `(place, cases)`.
    fn maps_html(groups: &[(&str, Vec<&Case>)]) -> String {
        let groups: Vec<Group> = groups
            .iter()
            .map(|(place, cases)| Group { place: place.to_string(), params: String::new(), run: String::new(), colour: 0, side: None, cases: cases.clone() })
            .collect();
        let catalog = Catalog { scenarios: Vec::new(), figures: Vec::new() };
        let mut page = Page::new(&catalog, &[], None);
        let mut out = String::new();
        page.write_maps(&mut out, &groups).expect("fmt");
        out
    }

    const TWO: &[(u64, u64, u64)] = &[(0, 0, 8 * KIB), (8 * KIB, MIB, 8 * KIB)];

    #[test]
    fn a_layout_is_the_same_records_at_another_place() {
        let a = map("f", 16 * KIB, GIB, TWO);
        assert!(same_layout(&a, &map("g", 16 * KIB, 3 * MIB, TWO)), "shifted, with another name");
        assert!(!same_layout(&a, &map("f", 20 * KIB, GIB, TWO)), "another size");
        assert!(!same_layout(&a, &map("f", 16 * KIB, GIB, &[(0, 0, 8 * KIB), (8 * KIB, 2 * MIB, 8 * KIB)])), "another gap");
        assert!(!same_layout(&a, &map("f", 16 * KIB, GIB, &[(0, MIB, 8 * KIB), (8 * KIB, 0, 8 * KIB)])), "another order");
        let mut unwritten = map("f", 16 * KIB, GIB, TWO);
        unwritten.extent_list[1].flags = crate::record::extent::flag::UNWRITTEN;
        assert!(!same_layout(&a, &unwritten), "other flags");
        // Delayed allocation: no place to shift, so compared as they are.
        let delalloc = |at: u64| {
            let mut m = map("f", 16 * KIB, at, TWO);
            m.extent_list[1].flags = crate::record::extent::flag::UNKNOWN | crate::record::extent::flag::DELALLOC;
            m.extent_list[1].physical = 0;
            m
        };
        assert!(same_layout(&delalloc(GIB), &delalloc(MIB)));
    }

    #[test]
    fn identical_layouts_are_drawn_once_with_their_files_listed() {
        let ext4 = case("ext4", 1, vec![map("exist_1", 16 * KIB, GIB, TWO), map("one", 4 * KIB, GIB, &[(0, 0, 4 * KIB)])]);
        let xfs = case("xfs", 1, vec![map("exist_1", 16 * KIB, 5 * MIB, TWO)]);
        let xfs_again = case("xfs", 2, vec![map("exist_1", 16 * KIB, 9 * MIB, TWO)]);
        // Only a later repeat has this one: listed, not drawn.
        let btrfs_again = case("btrfs", 2, vec![map("a<b>&\"c\"", 16 * KIB, 0, &[(0, 0, 8 * KIB), (8 * KIB, 7 * MIB, 8 * KIB)])]);
        let btrfs = case("btrfs", 1, vec![map("exist_1", 16 * KIB, 0, TWO)]);
        let html = maps_html(&[("ext4", vec![&ext4]), ("xfs", vec![&xfs, &xfs_again]), ("btrfs", vec![&btrfs, &btrfs_again])]);
        assert_eq!(html.matches("<figure class=\"strip\"").count(), 1, "one layout drawn, the file in one piece listed:\n{html}");
        assert!(html.contains(r#"data-path="exist_1" data-extents="2" data-records="2" data-truncated="false" data-files="4""#));
        assert!(html.contains(r#"<li class="map" data-fs="ext4" data-repeat="1" data-path="one" data-extents="1" data-files="1">"#), "{html}");
        assert!(html.contains("in one extent, not drawn"), "{html}");
        assert!(html.contains("× 4</b> files with this layout: exist_1 (ext4, repeat 1); exist_1 (xfs, repeat 1); exist_1 (xfs, repeat 2) and 1 more"));
        assert_eq!(html.matches(r#"<li class="member""#).count(), 4);
        assert!(html.contains(r#"<li class="member" data-fs="btrfs" data-repeat="1" data-path="exist_1" data-extents="2">exist_1 (btrfs, repeat 1) · device 0 B–1.01 MiB of 2 GiB</li>"#));
        // Each file's own range, in the caption and the list.
        assert!(html.contains("device 1.01 MiB at 1 GiB of 2 GiB"), "ends that print alike: span and start");
        // The later repeat's own layout: listed, escaped.
        assert!(html.contains(r#"<li class="map" data-fs="btrfs" data-repeat="2" data-path="a&lt;b&gt;&amp;&quot;c&quot;" data-extents="2" data-files="1">"#));
        assert!(!html.contains("a<b>"));
    }

    #[test]
    fn many_extents_draw_a_scatter_within_the_section_budget() {
        // 2,000 extents of 4 KiB in no order: far more than a strip shows.
        let records: Vec<(u64, u64, u64)> = (0..2_000).map(|i| (i * 4 * KIB, (i * 7_919 % 2_000) * 8 * KIB, 4 * KIB)).collect();
        let cases: Vec<Case> = (0..12).map(|i| case(&format!("fs{i}"), 1, vec![map(&format!("f{i}"), 8_000 * KIB, GIB, &records)])).collect();
        let mut cases = cases;
        // Make each layout its own: one more record moved.
        for (i, case) in cases.iter_mut().enumerate() {
            case.maps[0].extent_list[0].physical = GIB + (300 + i as u64) * 8 * KIB;
        }
        let groups: Vec<(String, Vec<&Case>)> = cases.iter().map(|c| (c.fs.clone(), vec![c])).collect();
        let groups: Vec<(&str, Vec<&Case>)> = groups.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
        let html = maps_html(&groups);
        let drawn = html.matches(r#"<svg class="scatter""#).count();
        assert!(drawn >= 1, "{html}");
        assert_eq!(html.matches("<figure class=\"strip\"").count(), drawn, "scatters instead of strips");
        assert!(!html.contains("<svg width=\"1080\""), "no strip drawn");
        assert!(html.contains(r#"data-extents="2000" data-records="2000" data-drawn=""#));
        assert!(html.len() <= SECTION_BYTES + 16 * KIB as usize, "{} bytes", html.len());
        let listed = html.matches("not drawn: the section&apos;s picture budget is spent").count();
        assert_eq!(drawn + listed, 12, "every layout drawn or listed");
        assert!(listed > 0, "twelve scatters do not fit one section");
    }

    #[test]
    fn the_most_fragmented_files_and_the_places_that_show_are_drawn_first() {
        // Ten places' 2-extent files, then btrfs's file of 3,000 extents.
        let two = |i: u64| [(0, 0, 8 * KIB), (8 * KIB, (i + 1) * MIB, 8 * KIB)];
        let small: Vec<Case> = (0..10).map(|i| case(&format!("fs{i}"), 1, vec![map("src/a.c", 16 * KIB, GIB, &two(i))])).collect();
        let records: Vec<(u64, u64, u64)> = (0..3_000).map(|i| (i * 4 * KIB, (i * 7_919 % 3_000) * 8 * KIB, 4 * KIB)).collect();
        let btrfs = case("btrfs", 1, vec![map("big", 12_000 * KIB, GIB, &records)]);
        let mut groups: Vec<(String, Vec<&Case>)> = small.iter().map(|c| (c.fs.clone(), vec![c])).collect();
        groups.push(("btrfs".into(), vec![&btrfs]));
        let groups: Vec<(&str, Vec<&Case>)> = groups.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
        let html = maps_html(&groups);
        let drawn: Vec<&str> = html.split(r#"<figure class="strip" data-scenario="replace-files" data-fs=""#).skip(1).map(|f| f.split('"').next().unwrap()).collect();
        assert_eq!(drawn[0], "btrfs", "the most fragmented first: {drawn:?}");
        assert!(drawn.len() < groups.len(), "not every file fits, so the order decides: {drawn:?}");
        // A place where the seed shows goes before a more fragmented one.
        let groups: Vec<Group> = groups
            .iter()
            .map(|(place, cases)| Group { place: place.to_string(), params: String::new(), run: String::new(), colour: 0, side: None, cases: cases.clone() })
            .collect();
        let layouts = distinct_layouts(&kept_maps(&groups));
        let first = |showing: &[&str]| layouts[draw_order(&layouts, showing)[0]][0].group.place.clone();
        assert_eq!(first(&[]), "btrfs");
        assert_eq!(first(&["fs0", "fs3"]), "fs0");
        // Among the places that show, one file system at a time.
        let scattered = |n: u64| -> Vec<(u64, u64, u64)> { (0..n).map(|i| (i * 4 * KIB, (i * 7_919 % n) * 8 * KIB, 4 * KIB)).collect() };
        let cases = [("btrfs", 3_000), ("btrfs", 2_900), ("xfs", 2_000)].map(|(fs, n)| case(fs, 1, vec![map("big", n * 4 * KIB, GIB, &scattered(n))]));
        let groups: Vec<Group> = ["btrfs@a", "btrfs@b", "xfs@a"]
            .iter()
            .zip(&cases)
            .map(|(place, c)| Group { place: place.to_string(), params: String::new(), run: String::new(), colour: 0, side: None, cases: vec![c] })
            .collect();
        let layouts = distinct_layouts(&kept_maps(&groups));
        let order: Vec<&str> = draw_order(&layouts, &["btrfs@a", "btrfs@b", "xfs@a"]).iter().map(|i| layouts[*i][0].group.place.as_str()).collect();
        assert_eq!(order, ["btrfs@a", "xfs@a", "btrfs@b"]);
    }

    #[test]
    fn a_files_last_block_is_not_said_to_be_mapped_past_eof() {
        // tree-copy's 67 KiB files in two extents of 4 KiB blocks.
        let records = [(0, 0, 32 * KIB), (32 * KIB, MIB, 36 * KIB)];
        let case = case("ext4", 1, vec![map("src/a.c", 67 * KIB, GIB, &records)]);
        let html = maps_html(&[("ext4", vec![&case])]);
        assert!(html.contains(r#"data-path="src/a.c" data-extents="2""#), "{html}");
        assert!(!html.contains("past EOF"), "{html}");
    }

    #[test]
    fn svg_documents_lose_prolog_and_namespaces() {
        let inlined = inline_svg(b"<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"2\"><rect/></svg>\n");
        assert_eq!(inlined, "<svg width=\"2\"><rect/></svg>");
    }
}
