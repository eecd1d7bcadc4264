//! Numbers for people, shared by every comparison renderer: values scaled
//! by their unit, factors, p-values and the labels of cases and figures.
//! The data keep base units; only these functions scale them.

/// About three significant digits, trailing zeros dropped: `410`, `46.6`,
/// `8.8`, `0.0123`.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return if v > 0.0 { "∞".into() } else { "-∞".into() };
    }
    let magnitude = v.abs();
    let decimals = if magnitude == 0.0 || magnitude >= 100.0 {
        0
    } else {
        // 2 decimals at 1..10, 1 at 10..100, 4 at 0.01..0.1, ...
        (2 - magnitude.log10().floor() as i32).clamp(0, 12) as usize
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// A value split into its number and the unit suffix to print after it
/// (with its leading space), scaled to read well: seconds as s, ms or µs,
/// bytes in binary units, counts whole when they are.
fn parts(v: f64, unit: &str) -> (String, String) {
    match unit {
        "s" => seconds(v),
        "us" => seconds(v / 1e6),
        "bytes" if v >= 0.0 && v.is_finite() => {
            let text = crate::units::bytes_short(v.round() as u64);
            match text.split_once(' ') {
                Some((n, u)) => (n.to_string(), format!(" {u}")),
                None => (text, String::new()),
            }
        }
        "count" if v.fract() == 0.0 => (format!("{v:.0}"), String::new()),
        "count" => (number(v), String::new()),
        "ratio" => (format!("{v:.3}"), String::new()),
        "%" => (number(v), "%".into()),
        other => (number(v), format!(" {other}")),
    }
}

fn seconds(v: f64) -> (String, String) {
    let magnitude = v.abs();
    if magnitude == 0.0 || magnitude >= 1.0 || !v.is_finite() {
        (number(v), " s".into())
    } else if magnitude >= 1e-3 {
        (number(v * 1e3), " ms".into())
    } else {
        (number(v * 1e6), " µs".into())
    }
}

/// The words for a value that went up and one that went down, by its
/// unit: times are `slower`/`faster` and rates (`…/s`) `faster`/`slower`;
/// counts `more`/`fewer`, bytes `larger`/`smaller`, anything else (ratios,
/// percentages, scores) `higher`/`lower`. Whether that is better is the
/// outcome's to say, not the word's.
pub fn direction_words(unit: &str) -> (&'static str, &'static str) {
    match unit {
        "s" | "ms" | "us" | "µs" | "ns" => ("slower", "faster"),
        u if u.ends_with("/s") => ("faster", "slower"),
        "bytes" => ("larger", "smaller"),
        u if u == "count" || u.starts_with("I/Os") => ("more", "fewer"),
        _ => ("higher", "lower"),
    }
}

/// One value with its unit: `1.23 s`, `64 MiB`, `46.6 MB/s`, `21`.
pub fn value(v: f64, unit: &str) -> String {
    let (n, suffix) = parts(v, unit);
    n + &suffix
}

/// A before and after, the unit said once when both share it:
/// `410 → 46.6 MB/s`, `800 ms → 1.2 s`, `21 → 2`.
pub fn change(base: f64, new: f64, unit: &str) -> String {
    let (b, b_suffix) = parts(base, unit);
    let (n, n_suffix) = parts(new, unit);
    if b_suffix == n_suffix { format!("{b} → {n}{n_suffix}") } else { format!("{b}{b_suffix} → {n}{n_suffix}") }
}

/// A side's range, the unit said once when both ends share it:
/// `40–44`, `2.88–5.82 ms`, `5.12 ms–125 ms`; one value when both ends
/// read the same.
pub fn range(lo: f64, hi: f64, unit: &str) -> String {
    let (l, l_suffix) = parts(lo, unit);
    let (h, h_suffix) = parts(hi, unit);
    if (&l, &l_suffix) == (&h, &h_suffix) {
        value(lo, unit)
    } else if l_suffix == h_suffix {
        format!("{l}–{h}{h_suffix}")
    } else {
        format!("{l}{l_suffix}–{h}{h_suffix}")
    }
}

/// A factor: `1.05x` below 2, `8.8x` below 100, then whole; `∞` when
/// there is no finite one.
pub fn factor(f: f64) -> String {
    if !f.is_finite() {
        return "∞".into();
    }
    let decimals = if f < 2.0 {
        2
    } else if f < 100.0 {
        1
    } else {
        0
    };
    format!("{f:.decimals$}x")
}

/// A p-value to three decimals, trailing zeros dropped; `<0.001` below.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        return "<0.001".into();
    }
    let text = format!("{p:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A fraction as a percentage: `0.05` → `5%`, `0.0476` → `4.8%`.
pub fn percent(fraction: f64) -> String {
    format!("{}%", number(fraction * 100.0))
}

/// A signed relative change: `+4.8%`, `-90%`.
pub fn signed_percent(fraction: f64) -> String {
    let sign = if fraction > 0.0 { "+" } else { "" };
    format!("{sign}{}", percent(fraction))
}

/// Parameters as `size=64 MiB, order=seed` (sizes as the tables print
/// them).
pub fn params(params: &serde_json::Map<String, serde_json::Value>) -> String {
    let one = |(name, value): (&String, &serde_json::Value)| {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.as_u64().map_or_else(|| n.to_string(), crate::units::bytes_or_count(name)),
            other => other.to_string(),
        };
        format!("{name}={text}")
    };
    params.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// A case as people say it: `tree-copy on ext4 (size=64 MiB)`, with the
/// figure when there is one: `tree-copy read_mbps on ext4 (size=64 MiB)`.
pub fn label(scenario: &str, figure: Option<&str>, fs: &str, p: &serde_json::Map<String, serde_json::Value>) -> String {
    let figure = figure.map(|f| format!(" {f}")).unwrap_or_default();
    let params = if p.is_empty() { String::new() } else { format!(" ({})", params(p)) };
    format!("{scenario}{figure} on {fs}{params}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_digits() {
        assert_eq!(number(410.0), "410");
        assert_eq!(number(46.63), "46.6");
        assert_eq!(number(8.8), "8.8");
        assert_eq!(number(0.012_34), "0.0123");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(number(f64::INFINITY), "∞");
    }

    #[test]
    fn values_scale_by_unit() {
        assert_eq!(change(410.0, 46.6, "MB/s"), "410 → 46.6 MB/s");
        assert_eq!(change(21.0, 2.0, "count"), "21 → 2");
        assert_eq!(change(0.8, 1.2, "s"), "800 ms → 1.2 s");
        assert_eq!(value(0.000_25, "s"), "250 µs");
        assert_eq!(value(1500.0, "us"), "1.5 ms");
        assert_eq!(value(64.0 * 1024.0 * 1024.0, "bytes"), "64 MiB");
        assert_eq!(value(10.5, "count"), "10.5");
        assert_eq!(value(0.5, "ratio"), "0.500");
        assert_eq!(range(40.0, 44.0, "count"), "40–44");
        assert_eq!(range(0.002_88, 0.005_82, "s"), "2.88–5.82 ms");
        assert_eq!(range(0.005_12, 0.125, "s"), "5.12–125 ms");
        assert_eq!(range(0.5, 1.5, "s"), "500 ms–1.5 s");
        assert_eq!(range(37.1e9, 37.1e9 + 1.0, "bytes"), "34.6 GiB");
        assert_eq!(value(12.0, "%"), "12%");
    }

    #[test]
    fn words_follow_the_unit_not_the_verdict() {
        assert_eq!(direction_words("s"), ("slower", "faster"));
        assert_eq!(direction_words("us"), ("slower", "faster"));
        assert_eq!(direction_words("ms"), ("slower", "faster"));
        // A rate that went up is faster.
        assert_eq!(direction_words("MB/s"), ("faster", "slower"));
        assert_eq!(direction_words("MiB/s"), ("faster", "slower"));
        assert_eq!(direction_words("count"), ("more", "fewer"));
        assert_eq!(direction_words("I/Os per MiB"), ("more", "fewer"));
        assert_eq!(direction_words("bytes"), ("larger", "smaller"));
        assert_eq!(direction_words("ratio"), ("higher", "lower"));
        assert_eq!(direction_words("%"), ("higher", "lower"));
    }

    #[test]
    fn factors_and_p_values() {
        assert_eq!(factor(8.84), "8.8x");
        assert_eq!(factor(1.047), "1.05x");
        assert_eq!(factor(250.4), "250x");
        assert_eq!(factor(f64::INFINITY), "∞");
        assert_eq!(p_value(0.0079), "0.008");
        assert_eq!(p_value(0.4), "0.4");
        assert_eq!(p_value(1e-5), "<0.001");
        assert_eq!(signed_percent(1.0 / 21.0), "+4.76%");
        assert_eq!(signed_percent(-0.9), "-90%");
    }

    #[test]
    fn labels_read_as_sentences() {
        let mut p = serde_json::Map::new();
        p.insert("size".into(), (64u64 << 20).into());
        p.insert("order".into(), "seed".into());
        assert_eq!(label("tree-copy", Some("read_mbps"), "ext4", &p), "tree-copy read_mbps on ext4 (size=64 MiB, order=seed)");
        assert_eq!(label("exec", None, "dir", &serde_json::Map::new()), "exec on dir");
    }
}
