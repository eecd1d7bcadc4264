//! A hunt drawn: the deciding figure at each measured value of the varied
//! condition, with the bracket where the seed's claim flips shaded.
//!
//! A hunt run (`fslab hunt`) stores one verdict whose places are its
//! steps, each naming the varied key and its value in its conditions; the
//! chart is drawn from that alone. The bracket is the pair of neighbouring
//! values (in value order) whose claims differ: the search measures no
//! point inside its final bracket, so there is one such pair, unless the
//! claims flip more than once (a hunt that ended `not_monotonic`): then
//! no bracket is shaded and the chart says where it shows and where not. Both axes
//! are logarithmic when the values span more than ten times (sizes,
//! extents counts); points are red where the claim shows, grey where gone.
//! Numbers ride in `data-` attributes, as on every chart of the page.

use std::fmt::{self, Write as _};

use super::markup::{escape_xml as escape, num};
use crate::record::Verdict;
use crate::units::{bytes_short, parse_bytes, short_number};

/// One measured point: the value (bytes or a number), its text as given,
/// the figure there, and the claim.
struct Point<'a> {
    x: f64,
    shown: &'a str,
    y: f64,
    shows: Option<bool>,
}

impl Point<'_> {
    /// The value for people: `256 MiB` on a size axis, else as given.
    fn said(&self, sizes: bool) -> String {
        if sizes { bytes_short(self.x as u64) } else { self.shown.to_string() }
    }
}

/// The key a hunt verdict varied: the one condition every place names and
/// whose values differ between places; `None` for any other verdict.
pub fn varied_key(verdict: &Verdict) -> Option<&str> {
    let first = verdict.places.first()?;
    first.conditions.keys().map(String::as_str).find(|key| {
        verdict.places.iter().all(|p| p.conditions.contains_key(*key))
            && verdict.places.iter().any(|p| p.conditions.get(*key) != first.conditions.get(*key))
    })
}

/// The chart for a hunt's verdict, or `None` when it is not one (fewer
/// than two places, or no varied key).
pub fn chart(verdict: &Verdict) -> Option<String> {
    let key = varied_key(verdict)?;
    let sizes = key == "memory" || key.ends_with("bytes") || key.ends_with("size");
    let mut points: Vec<Point> = verdict
        .places
        .iter()
        .filter_map(|p| {
            let shown = p.conditions.get(key)?;
            let x = parse_bytes(shown).ok()? as f64;
            Some(Point { x, shown, y: p.value?, shows: p.shows })
        })
        .collect();
    if points.len() < 2 {
        return None;
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    let judged: Vec<&Point> = points.iter().filter(|p| p.shows.is_some()).collect();
    let flips: Vec<(&Point, &Point)> = judged.windows(2).filter(|w| w[0].shows != w[1].shows).map(|w| (w[0], w[1])).collect();
    let figure = verdict.places.first().map_or("", |p| p.figure.as_str());
    let mut out = String::new();
    let flip = match flips[..] {
        [one] => Flip::Between(one.0, one.1),
        [] => Flip::None,
        _ => {
            let at = |shows: bool| judged.iter().filter(|p| p.shows == Some(shows)).map(|p| p.said(sizes)).collect::<Vec<_>>().join(" and ");
            Flip::NotOnce(format!("no single flip: shows at {} but gone at {}", at(true), at(false)))
        }
    };
    write(&mut out, key, figure, sizes, &points, &flip).ok()?;
    Some(out)
}

/// Where the claim flips along the chart's points.
enum Flip<'a> {
    /// Between these neighbours: the bracket.
    Between(&'a Point<'a>, &'a Point<'a>),
    /// Nowhere (every judged point alike).
    None,
    /// More than once, said in these words (no bracket).
    NotOnce(String),
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 50.0;

/// A scale from a value range onto pixels, logarithmic when the range
/// spans more than ten times and starts above 0.
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    fn over(values: impl Iterator<Item = f64> + Clone) -> Scale {
        let lo = values.clone().fold(f64::INFINITY, f64::min);
        let hi = values.fold(f64::NEG_INFINITY, f64::max);
        let log = lo > 0.0 && hi / lo > 10.0;
        let (lo, hi) = if log { (lo / 1.5, hi * 1.5) } else { (lo.min(0.0), if hi > lo { hi * 1.1 } else { lo + 1.0 }) };
        Scale { lo, hi, log }
    }

    fn fraction(&self, v: f64) -> f64 {
        if self.log { (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()) } else { (v - self.lo) / (self.hi - self.lo) }
    }
}

fn write(out: &mut String, key: &str, figure: &str, sizes: bool, points: &[Point], flip: &Flip) -> fmt::Result {
    let bracket = match flip {
        Flip::Between(a, b) => Some((*a, *b)),
        _ => None,
    };
    let xs = Scale::over(points.iter().map(|p| p.x));
    let ys = Scale::over(points.iter().map(|p| p.y.max(0.5)));
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let px = |x: f64| LEFT + xs.fraction(x) * plot_w;
    let py = |y: f64| TOP + (1.0 - ys.fraction(y.max(0.5))) * plot_h;
    let said = |p: &Point| p.said(sizes);
    let (lo, hi) = bracket.map_or((String::new(), String::new()), |(a, b)| (said(a), said(b)));
    writeln!(
        out,
        r#"<svg class="chart hunt" style="max-width: 720px" viewBox="0 0 {} {}" role="img" data-key="{}" data-figure="{}" data-points="{}" data-bracket-lo="{}" data-bracket-hi="{}" aria-label="{} against {}">"#,
        num(WIDTH),
        num(HEIGHT),
        escape(key),
        escape(figure),
        points.len(),
        escape(&lo),
        escape(&hi),
        escape(figure),
        escape(key)
    )?;
    if let Some((a, b)) = bracket {
        let (x0, x1) = (px(a.x), px(b.x));
        writeln!(
            out,
            r##"<rect class="bracket" x="{}" y="{}" width="{}" height="{}" fill="#f6d365" fill-opacity="0.45"><title>the claim flips between {lo} and {hi}</title></rect>"##,
            num(x0),
            num(TOP),
            num((x1 - x0).max(2.0)),
            num(plot_h)
        )?;
        writeln!(out, r##"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="#8a6d00">flips between {} and {}</text>"##, num((x0 + x1) / 2.0), num(TOP - 8.0), escape(&lo), escape(&hi))?;
    }
    if let Flip::NotOnce(words) = flip {
        writeln!(out, r##"<text class="not-monotonic" x="{}" y="{}" font-size="12" text-anchor="middle" fill="#b42318">{}</text>"##, num(LEFT + plot_w / 2.0), num(TOP - 8.0), escape(words))?;
    }
    // Axes: the frame, then a label per point below and a few on the left.
    writeln!(out, r##"<path d="M{l} {t}V{b}H{r}" fill="none" stroke="#9aa5b1"/>"##, l = num(LEFT), t = num(TOP), b = num(TOP + plot_h), r = num(LEFT + plot_w))?;
    // Values too close to the last one labelled stay unlabelled (each
    // point's tooltip names it).
    let mut last_label = f64::NEG_INFINITY;
    for p in points {
        if px(p.x) - last_label < 56.0 {
            continue;
        }
        last_label = px(p.x);
        writeln!(out, r##"<text x="{}" y="{}" font-size="11" text-anchor="middle" fill="#52606d">{}</text>"##, num(px(p.x)), num(TOP + plot_h + 16.0), escape(&said(p)))?;
    }
    writeln!(out, r##"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="#1f2933">{}</text>"##, num(LEFT + plot_w / 2.0), num(HEIGHT - 8.0), escape(key))?;
    let (ymin, ymax) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.y), b.max(p.y)));
    for y in [ymin, ymax] {
        writeln!(out, r##"<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#52606d">{}</text>"##, num(LEFT - 6.0), num(py(y) + 4.0), short_number(y))?;
    }
    writeln!(out, r##"<text x="12" y="{}" font-size="12" fill="#1f2933" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"##, num(TOP + plot_h / 2.0), num(TOP + plot_h / 2.0), escape(figure))?;
    let line: Vec<String> = points.iter().map(|p| format!("{},{}", num(px(p.x)), num(py(p.y)))).collect();
    writeln!(out, r##"<polyline points="{}" fill="none" stroke="#9aa5b1" stroke-dasharray="3 3"/>"##, line.join(" "))?;
    for p in points {
        let (class, colour) = match p.shows {
            Some(true) => ("shows", "#d64545"),
            Some(false) => ("gone", "#7b8794"),
            None => ("unknown", "#cbd2d9"),
        };
        writeln!(
            out,
            r#"<circle class="point {class}" cx="{}" cy="{}" r="5" fill="{colour}" data-value="{}" data-figure-value="{}" data-shows="{class}"><title>{} {}: {} {}, {class}</title></circle>"#,
            num(px(p.x)),
            num(py(p.y)),
            escape(p.shown),
            num(p.y),
            escape(key),
            escape(&said(p)),
            escape(figure),
            short_number(p.y)
        )?;
    }
    writeln!(out, "</svg>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PlaceVerdict;

    fn step(memory: &str, extents: f64, shows: bool) -> PlaceVerdict {
        PlaceVerdict {
            target: format!("xfs@{memory}"),
            fs: "xfs".into(),
            conditions: [("memory".to_string(), memory.to_string())].into(),
            shows: Some(shows),
            figure: "extents".into(),
            value: Some(extents),
            against: None,
            evidence: String::new(),
            ..Default::default()
        }
    }

    #[test]
    fn a_hunt_is_drawn_with_its_bracket_between_the_neighbours_that_differ() {
        let mut verdict = Verdict::unknown("mmap-fill", "000", "");
        verdict.places = vec![step("1G", 1.0, false), step("362M", 1.0, false), step("215M", 65536.0, true), step("279M", 1.0, false), step("245M", 65536.0, true)];
        assert_eq!(varied_key(&verdict), Some("memory"));
        let svg = chart(&verdict).unwrap();
        assert!(svg.contains(r#"data-bracket-lo="245 MiB" data-bracket-hi="279 MiB""#), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 5);
        assert_eq!(svg.matches(r#"data-shows="shows""#).count(), 2);
        // A seeds-preset verdict over several file systems is no hunt.
        let mut preset = Verdict::unknown("mmap-fill", "000", "");
        preset.places = vec![step("1G", 1.0, false)];
        preset.places[0].conditions.clear();
        assert!(chart(&preset).is_none());
    }

    #[test]
    fn points_that_flip_more_than_once_get_no_bracket_and_say_so() {
        let mut verdict = Verdict::unknown("mmap-fill", "000", "");
        verdict.places = vec![step("1G", 65536.0, true), step("512M", 1.0, false), step("256M", 65536.0, true)];
        let svg = chart(&verdict).unwrap();
        assert!(svg.contains(r#"data-bracket-lo="" data-bracket-hi="""#), "{svg}");
        assert!(!svg.contains(r#"class="bracket""#), "{svg}");
        assert!(svg.contains("no single flip: shows at 256 MiB and 1 GiB but gone at 512 MiB"), "{svg}");
    }
}
