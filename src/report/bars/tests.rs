//! The bar charts' geometry and marks, on crafted bars.

use super::*;

fn bar(fs: &str, values: &[f64], repeats: usize) -> Bar {
    Bar {
        fs: fs.to_string(),
        params: String::new(),
        run: String::new(),
        side: None,
        colour: 0,
        values: values.to_vec(),
        repeats,
        missing: if values.len() < repeats { vec!["needs root".to_string()] } else { Vec::new() },
        emulated: false,
        mark: None,
    }
}

fn chart(bars: Vec<Bar>) -> String {
    BarChart { scenario: "s", figure: "wall_s", unit: "s", better: Better::Lower, kind: Kind::Timing, about: None, sides: None, bars, mark: None }
        .render()
}

/// The value of `name="..."` in each element of class `class`.
fn attrs<'a>(svg: &'a str, class: &str, name: &str) -> Vec<&'a str> {
    svg.split('<')
        .filter(|tag| tag.contains(&format!(r#"class="{class}""#)))
        .filter_map(|tag| tag.split(&format!(r#" {name}=""#)).nth(1)?.split('"').next())
        .collect()
}

#[test]
fn medians_and_ranges() {
    assert_eq!(spread(&[]), None);
    assert_eq!(spread(&[3.0, 1.0, 2.0]), Some(Spread { median: 2.0, min: 1.0, max: 3.0 }));
    assert_eq!(spread(&[4.0, 1.0]), Some(Spread { median: 2.5, min: 1.0, max: 4.0 }));
}

#[test]
fn two_targets_of_three_repeats_give_medians_and_whiskers() {
    let svg = chart(vec![bar("ext4", &[0.3, 0.1, 0.2], 3), bar("xfs", &[5.0, 7.0, 6.0], 3)]);
    assert_eq!(attrs(&svg, "bar", "data-fs"), ["ext4", "xfs"]);
    assert_eq!(attrs(&svg, "bar", "data-value"), ["0.2", "6"]);
    assert_eq!(attrs(&svg, "bar", "data-min"), ["0.1", "5"]);
    assert_eq!(attrs(&svg, "bar", "data-max"), ["0.3", "7"]);
    assert_eq!(attrs(&svg, "bar", "data-repeats"), ["3", "3"]);
    assert_eq!(svg.matches(r#"class="whisker""#).count(), 2);
    assert!(svg.contains(">0.2 s</text>") && svg.contains(">6 s</text>"), "values printed");
    assert!(svg.contains(r#"<text class="value" x="#), "right of the bar while there is room");
    assert!(svg.contains("median of 3, whisker min–max"));
    assert!(svg.contains(">wall_s (s)</text>"), "the unit is in the axis title");
}

#[test]
fn a_long_value_at_the_top_of_the_scale_goes_inside_its_bar() {
    let svg = chart(vec![bar("ext4", &[2.5, 2.5], 3), bar("xfs", &[2.0, 2.0], 3)]);
    let value = |text: &str| svg.split(&format!(">{text}</text>")).next().unwrap().rsplit("<text ").next().unwrap().to_string();
    assert!(value("2.5 s (2/3)").starts_with(r#"class="value in white""#), "{svg}");
    assert!(value("2 s (2/3)").starts_with(r#"class="value" "#), "room right of the shorter bar: {svg}");
}

#[test]
fn inside_values_are_dark_on_light_bars() {
    assert_eq!(ink_on("#0072b2"), "#ffffff");
    assert_eq!(ink_on("#e69f00"), "#1b1f24");
    assert_eq!(ink_on("#56b4e9"), "#1b1f24");
}

#[test]
fn a_long_place_is_broken_before_its_conditions_not_cut() {
    let svg = chart(vec![bar("xfs@6.1.0-56-amd64,vm=512M", &[1.0], 1), bar("ext4@age=churn", &[2.0], 1)]);
    assert!(svg.contains(r#"class="name" x="#) && svg.contains(">xfs</text>"), "{svg}");
    assert!(svg.contains(r#">@6.1.0-56-amd64,vm=512M</text>"#), "the conditions whole, on their own line");
    assert!(svg.contains(">ext4@age=churn</text>"), "a short place stays on one line");
    assert!(!svg.contains('…'), "nothing cut");
}

#[test]
fn one_repeat_draws_no_whisker() {
    let svg = chart(vec![bar("ext4", &[1.0], 1), bar("xfs", &[2.0], 1)]);
    assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
    assert!(!svg.contains("whisker"));
}

#[test]
fn missing_is_said_never_drawn_as_zero() {
    let svg = chart(vec![bar("ext4", &[1.0], 1), bar("dir", &[], 1)]);
    assert_eq!(attrs(&svg, "bar", "data-fs"), ["ext4"], "no bar for the missing one");
    assert!(svg.contains("axis-title"));
    let nothing = chart(vec![bar("dir", &[], 1)]);
    assert!(!nothing.contains("axis-title") && !nothing.contains(">0</text>"), "no scale without a value");
    assert_eq!(attrs(&svg, "missing", "data-fs"), ["dir"]);
    assert_eq!(attrs(&svg, "missing", "data-missing"), ["needs root"]);
    assert!(svg.contains("<title>dir: missing: needs root</title>"));
    assert!(svg.contains(">missing: needs root</text>"));
}

#[test]
fn partly_measured_bars_say_so() {
    let svg = chart(vec![bar("ext4", &[1.0, 3.0], 3)]);
    assert_eq!(attrs(&svg, "bar", "data-measured"), ["2"]);
    assert!(svg.contains("measured in 2 of 3 repeats, missing in the others: needs root"));
    assert!(svg.contains(">2 s (2/3)</text>"));
}

#[test]
fn labels_and_names_are_escaped() {
    let mut odd = bar("a<b&\"c\"", &[1.0], 1);
    odd.params = "name=<x>".to_string();
    let svg = BarChart {
        scenario: "s&",
        figure: "f<",
        unit: "count",
        better: Better::Higher,
        kind: Kind::Exact,
        about: Some("\"quoted\""),
        sides: None,
        bars: vec![odd],
        mark: None,
    }
    .render();
    assert!(svg.contains(r#"data-fs="a&lt;b&amp;&quot;c&quot;""#));
    assert!(svg.contains(r#"data-scenario="s&amp;" data-figure="f&lt;""#));
    assert!(!svg.contains("<b") && !svg.contains("<x>") && !svg.contains("\"quoted\""));
}

#[test]
fn bytes_scale_to_one_unit_and_negative_values_extend_left() {
    let svg = BarChart {
        scenario: "s",
        figure: "bytes",
        unit: "bytes",
        better: Better::Lower,
        kind: Kind::Exact,
        about: None,
        sides: None,
        bars: vec![bar("ext4", &[16.0 * 1048576.0], 1)],
        mark: None,
    }
    .render();
    assert!(svg.contains(">bytes (MiB)</text>") && svg.contains(">16 MiB</text>"), "{svg}");
    let svg = chart(vec![bar("ext4", &[-2.0], 1), bar("xfs", &[4.0], 1)]);
    let x: Vec<f64> = attrs(&svg, "bar", "x").iter().map(|v| v.parse().unwrap()).collect();
    assert!(x[0] < x[1], "the negative bar starts left of the zero line");
}

fn sided(fs: &str, side: Side, values: &[f64]) -> Bar {
    Bar { side: Some(side), ..bar(fs, values, values.len().max(1)) }
}

fn compared(bars: Vec<Bar>) -> String {
    let sides = Sides::compared("tag before", "tag after");
    BarChart { scenario: "s", figure: "extents", unit: "count", better: Better::Lower, kind: Kind::Exact, about: None, sides: Some(sides), bars, mark: None }
        .render()
}

#[test]
fn base_and_new_are_drawn_as_a_pair_under_one_label() {
    let svg = compared(vec![
        sided("ext4", Side::Base, &[10.0, 12.0]),
        sided("ext4", Side::New, &[20.0, 22.0]),
        sided("xfs", Side::Base, &[5.0]),
        sided("xfs", Side::New, &[]),
    ]);
    assert_eq!(attrs(&svg, "bar base", "data-side"), ["base", "base"]);
    assert_eq!(attrs(&svg, "bar", "data-side"), ["new"], "the new side's bars keep class bar");
    assert_eq!(attrs(&svg, "bar base", "data-value"), ["11", "5"]);
    assert_eq!(attrs(&svg, "missing", "data-side"), ["new"]);
    assert_eq!(svg.matches(r#"<g class="label""#).count(), 2, "one label per pair");
    assert!(svg.contains(">base: tag before</text>") && svg.contains(">new: tag after</text>"), "the legend names the sides");
    assert!(svg.contains(r#"fill-opacity="0.28""#), "the base is pale");
    assert!(svg.contains("<title>ext4 · base: tag before: extents 11 (median of 2; min 10, max 12)</title>"), "{svg}");
    // The pair is adjacent: the base bar right above the new one.
    let y = |class| -> Vec<f64> { attrs(&svg, class, "y").iter().map(|v| v.parse().unwrap()).collect() };
    let (base, new) = (y("bar base")[0], y("bar")[0]);
    assert!(new > base && new - base <= PAIR_HEIGHT + PAIR_GAP + 0.01, "{base} {new}");
    // Without sides: no data-side, no legend.
    let plain = chart(vec![bar("ext4", &[1.0], 1)]);
    assert!(!plain.contains("data-side") && !plain.contains("legend"));
}

#[test]
fn bars_pair_only_with_their_other_side() {
    let bars = vec![sided("ext4", Side::Base, &[1.0]), sided("ext4", Side::New, &[1.0]), sided("xfs", Side::New, &[1.0])];
    assert_eq!(clusters(&bars), [0..2, 2..3]);
    let alone = vec![bar("ext4", &[1.0], 1), bar("ext4", &[1.0], 1)];
    assert_eq!(clusters(&alone), [0..1, 1..2], "without sides, every bar has its row");
}

#[test]
fn a_hundredfold_span_takes_a_log_axis_and_zero_a_stub_at_its_floor() {
    let svg = compared(vec![sided("ext3", Side::New, &[16.0]), sided("btrfs", Side::New, &[31_483.0]), sided("dir", Side::New, &[0.0])]);
    assert!(svg.contains(r#"data-scale="log""#), "{svg}");
    assert!(svg.contains("count, log scale"));
    for tick in [">10</text>", ">100</text>", ">1k</text>", ">10k</text>", ">100k</text>"] {
        assert!(svg.contains(tick), "{tick}: {svg}");
    }
    let x: Vec<f64> = attrs(&svg, "bar", "x").iter().map(|v| v.parse().unwrap()).collect();
    let w: Vec<f64> = attrs(&svg, "bar", "width").iter().map(|v| v.parse().unwrap()).collect();
    assert!(x.iter().all(|v| (v - x[0]).abs() < 1e-9), "all bars start at the floor: {x:?}");
    assert_eq!(w[2], 3.0, "zero is a stub");
    assert!(w[0] > 10.0 && w[1] > w[0], "16 is visible beside 31,483: {w:?}");
    assert!(svg.contains(">0</text>"), "the stub says its number");
    let linear = chart(vec![bar("ext4", &[16.0], 1), bar("xfs", &[1600.0], 1)]);
    assert!(linear.contains(r#"data-scale="linear""#), "exactly 100x stays linear");
}
#[test]
fn an_emulated_timing_bar_is_hatched_marked_and_says_why() {
    let emulated = Bar { emulated: true, ..bar("ext4@6.1.0-56-amd64", &[3.0, 4.0, 5.0], 3) };
    let svg = chart(vec![bar("ext4", &[0.5], 1), emulated.clone()]);
    assert_eq!(svg.matches(r#"class="bar emulated""#).count(), 1, "{svg}");
    assert_eq!(svg.matches(r#"class="hatch""#).count(), 1, "{svg}");
    assert_eq!(svg.matches("<pattern id=\"fslab-emulated-hatch\"").count(), 1, "{svg}");
    assert!(svg.contains(">4 s†</text>") && svg.contains(">0.5 s</text>"), "{svg}");
    assert!(svg.contains("emulated (TCG): timings measure the emulator"), "{svg}");
    // An exact figure of the same case is the kernel's: drawn plain.
    let exact =
        BarChart { scenario: "s", figure: "extents", unit: "count", better: Better::Lower, kind: Kind::Exact, about: None, sides: None, bars: vec![emulated], mark: None }
            .render();
    assert!(!exact.contains("emulated") && !exact.contains('†') && !exact.contains("pattern"), "{exact}");
}

#[test]
fn a_value_inside_a_hatched_bar_gets_a_halo_of_the_bars_colour() {
    // The longest bar's value has no room right of it: it goes inside.
    let long = Bar { emulated: true, ..bar("xfs", &[55.3, 55.3], 10) };
    let svg = chart(vec![long, Bar { emulated: true, ..bar("ext4", &[1.0], 1) }]);
    let inside: Vec<&str> = svg.split("<text ").filter(|t| t.contains("value in")).collect();
    assert_eq!(inside.len(), 1, "{svg}");
    assert!(inside[0].contains("halo") && inside[0].contains(&format!(r#"stroke="{}""#, PALETTE[0])), "{svg}");
    let outside: Vec<&str> = svg.split("<text ").filter(|t| t.starts_with(r#"class="value""#)).collect();
    assert!(outside.iter().all(|t| !t.contains("halo")), "a value beside its bar needs none: {svg}");
}
