//! Sizes for people. Data keeps base units (`*_bytes`); only printing scales
//! them, here, for every renderer alike.

const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// Bytes in a MiB: every rate fslab records is in MiB/s (2^20 bytes a
/// second), as every size it prints is in binary units.
pub const MIB: f64 = 1_048_576.0;

/// A rate in MiB/s: `bytes` over `seconds`, divided by 2^20; `None` when no
/// time passed (a rate of an instant is no rate).
pub fn mib_per_s(bytes: f64, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| bytes / seconds / MIB)
}

/// The shortest window a rate is recorded over: 1 ms. Under it, the
/// clock's reads and the calls that open and close the window weigh as
/// much as the work (a fallocate timed at 1 ms is no 250,000 MiB/s of
/// anything). Higher would drop real reads: a cold read of 16 MiB from a
/// loop device takes 8 to 16 ms, and a compare of five repeats needs them
/// all.
pub const RATE_FLOOR_S: f64 = 0.001;

/// A rate in MiB/s of `bytes` over `seconds`, or why there is none: the
/// window was under [`RATE_FLOOR_S`] (or no time passed). The reason is
/// what a missing figure says.
pub fn rate(bytes: f64, seconds: f64) -> (Option<f64>, String) {
    if seconds >= RATE_FLOOR_S {
        return (mib_per_s(bytes, seconds), String::new());
    }
    let took = if seconds > 0.0 { format!("{:.2} ms", seconds * 1e3) } else { "no time".into() };
    (None, format!("it took {took}, under the {} ms a rate needs to mean anything", RATE_FLOOR_S * 1e3))
}

/// `bytes` as a value in the largest binary unit not above it, and that unit.
fn scale(bytes: u64) -> (f64, &'static str) {
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    (value, UNITS[unit])
}

/// A size for tables, one decimal: `512 B`, `4.0 KiB`, `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    match scale(n) {
        (_, "B") => format!("{n} B"),
        (value, unit) => format!("{value:.1} {unit}"),
    }
}

/// A size for labels, about three significant digits and no trailing
/// zeros: `4 KiB`, `1.25 GiB`, `256 MiB`.
pub fn bytes_short(n: u64) -> String {
    let (value, unit) = scale(n);
    if unit == "B" {
        return format!("{n} B");
    }
    let decimals = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    format!("{text} {unit}")
}

/// A formatter for a parameter value: sizes (names ending in `size` or
/// `bytes`, or `bs`) as `bytes_short`, anything else as a plain number.
pub fn bytes_or_count(name: &str) -> fn(u64) -> String {
    if name.ends_with("size") || name.ends_with("bytes") || name == "bs" { bytes_short } else { |n| n.to_string() }
}

/// A number with about three significant digits and no trailing zeros:
/// `884`, `0.149`, `16,384`, `0.0123`.
pub fn short_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs();
    let decimals = if magnitude == 0.0 || magnitude >= 100.0 {
        0
    } else if magnitude >= 10.0 {
        1
    } else if magnitude >= 1.0 {
        2
    } else {
        ((-magnitude.log10()).floor() as usize + 3).min(9)
    };
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    let text = if text == "-0" { "0".to_string() } else { text };
    group_digits(&text)
}

/// A ratio in [0, 1] to three decimals, where one strictly between 0 and
/// 1 never reads as either end: a layout score of 0.9997 (two breaks in
/// 7,424 blocks) prints `>0.999`, not `1.000`.
pub fn ratio(value: f64) -> String {
    let text = format!("{value:.3}");
    if value < 1.0 && text == "1.000" {
        ">0.999".into()
    } else if value > 0.0 && text == "0.000" {
        "<0.001".into()
    } else {
        text
    }
}

/// `part` of `whole` as a percentage with one decimal, where a share
/// strictly between none and all never reads as either: 45 of 113,000
/// prints `<0.1%`, not `0.0%`; `-` of nothing.
pub fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    let pct = 100.0 * part as f64 / whole as f64;
    match format!("{pct:.1}%") {
        text if part > 0 && text == "0.0%" => "<0.1%".into(),
        text if part < whole && text == "100.0%" => ">99.9%".into(),
        text => text,
    }
}

/// Thousands separated by commas in the integer part of numbers of five
/// digits or more (`16,384`; `4096` stays as is, as people write block
/// sizes).
pub fn group_digits(text: &str) -> String {
    let (sign, rest) = text.strip_prefix('-').map_or(("", text), |r| ("-", r));
    let (whole, fraction) = rest.split_once('.').map_or((rest, None), |(w, f)| (w, Some(f)));
    if whole.len() < 5 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_string();
    }
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    match fraction {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Parse a size as people write it: `4096`, `512M`, `1G`, `1GiB`, `64k`
/// (binary multiples; a bare number is bytes).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is not a size (for example 512M or 2G)"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("`{text}`: unknown size suffix (use K, M, G or T)")),
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Read `--fill`: `80%` or `0.8`, more than 0 and below 100%.
pub fn parse_fill(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let value: f64 = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("`{text}` is not a fill level: give a percentage such as 80%"))?;
    if !(value > 0.0 && value < 0.99) {
        return Err(format!("{text}: give a fill above 0% and below 99% (the work needs room)"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_bytes_over_seconds_in_mib() {
        // The example: 256 MiB in 0.4377 s.
        let rate = mib_per_s(256.0 * super::MIB, 0.4377).unwrap();
        assert!((rate - 584.88).abs() < 0.01, "{rate}");
        assert_eq!(mib_per_s(1.0, 0.0), None);
        // 256 MiB "in" 0.5 ms is no rate.
        let (none, why) = super::rate(256.0 * super::MIB, 0.0005);
        assert_eq!(none, None);
        assert_eq!(why, "it took 0.50 ms, under the 1 ms a rate needs to mean anything");
        assert_eq!(super::rate(256.0 * super::MIB, 0.0).1, "it took no time, under the 1 ms a rate needs to mean anything");
        assert_eq!(super::rate(super::MIB, 0.5), (Some(2.0), String::new()));
    }

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("64k"), Ok(64 << 10));
        assert!(parse_bytes("G").is_err());
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }

    const KIB: u64 = 1024;
    const MIB: u64 = KIB * 1024;
    const GIB: u64 = MIB * 1024;

    #[test]
    fn table_sizes_have_one_decimal() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn label_sizes_read_well() {
        assert_eq!(bytes_short(0), "0 B");
        assert_eq!(bytes_short(1023), "1023 B");
        assert_eq!(bytes_short(4 * KIB), "4 KiB");
        assert_eq!(bytes_short(GIB + GIB / 4), "1.25 GiB");
        assert_eq!(bytes_short(256 * MIB), "256 MiB");
        assert_eq!(bytes_short(u64::MAX), "16 EiB");
    }

    #[test]
    fn a_share_or_ratio_between_the_ends_never_reads_as_one() {
        assert_eq!(share(45, 113_000), "<0.1%");
        assert_eq!(share(0, 113_000), "0.0%");
        assert_eq!(share(112_999, 113_000), ">99.9%");
        assert_eq!(share(1, 2), "50.0%");
        assert_eq!(share(0, 0), "-");
        // Two breaks in 7,424 blocks; one in 18,588 (a 72.6 MiB file).
        assert_eq!(ratio(7422.0 / 7423.0), ">0.999");
        assert_eq!(ratio(18_586.0 / 18_588.0), ">0.999");
        assert_eq!(ratio(1.0), "1.000");
        assert_eq!(ratio(0.0), "0.000");
        assert_eq!(ratio(0.0001), "<0.001");
        assert_eq!(ratio(0.5), "0.500");
    }

    #[test]
    fn short_numbers_keep_three_digits() {
        assert_eq!(short_number(0.149_048), "0.149");
        assert_eq!(short_number(0.012_34), "0.0123");
        assert_eq!(short_number(7.0), "7");
        assert_eq!(short_number(2.5), "2.5");
        assert_eq!(short_number(1_234_567.0), "1,234,567");
        assert_eq!(short_number(-0.0001), "-0.0001");
        assert_eq!(short_number(0.0), "0");
    }
}
