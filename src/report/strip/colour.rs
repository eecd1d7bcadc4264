//! The strip's colours: a ramp for where data lies on the device, and a
//! few fixed colours for what is not a place.
//!
//! The design decision: the ramp is viridis, whose lightness rises
//! steadily, so the device order survives grey-scale printing and
//! colour-blind eyes; the fixed colours are chosen off the ramp, so
//! "unknown location" never reads as a place.

pub(super) const GREY_UNKNOWN: &str = "#9e9e9e";
pub(super) const SHARED_COLOUR: &str = "#8e24aa";
pub(super) const FORWARD_COLOUR: &str = "#1f5fa8";
pub(super) const BACKWARD_COLOUR: &str = "#d62728";
pub(super) const OUTLINE_COLOUR: &str = "#555555";

/// Viridis sampled at nine even steps (viridisLite `viridis(9)`); the ramp
/// interpolates between them.
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2d, 0x7b],
    [0x3b, 0x52, 0x8b],
    [0x2c, 0x72, 0x8e],
    [0x21, 0x90, 0x8c],
    [0x27, 0xad, 0x81],
    [0x5d, 0xc8, 0x63],
    [0xaa, 0xdc, 0x32],
    [0xfd, 0xe7, 0x25],
];

/// Colour of a device position, `fraction` 0.0 (device start) to 1.0
/// (device end), on the viridis ramp; out-of-range and NaN clamp to the
/// nearest end. Lightness rises monotonically with `fraction`.
pub(super) fn device_colour(fraction: f64) -> [u8; 3] {
    let fraction = if fraction.is_nan() { 0.0 } else { fraction.clamp(0.0, 1.0) };
    let steps = (VIRIDIS.len() - 1) as f64;
    let position = fraction * steps;
    let low = (position.floor() as usize).min(VIRIDIS.len() - 2);
    let t = position - low as f64;
    let (a, b) = (VIRIDIS[low], VIRIDIS[low + 1]);
    std::array::from_fn(|i| (f64::from(a[i]) + (f64::from(b[i]) - f64::from(a[i])) * t).round() as u8)
}

/// `#rrggbb`.
pub(super) fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_ramp_is_monotone_in_lightness_with_distinct_ends() {
        // Relative luminance (WCAG / sRGB).
        let luminance = |[r, g, b]: [u8; 3]| {
            let linear = |c: u8| {
                let c = f64::from(c) / 255.0;
                if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
            };
            0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
        };
        let mut previous = -1.0;
        for step in 0..=200 {
            let l = luminance(device_colour(f64::from(step) / 200.0));
            assert!(l >= previous, "lightness falls at step {step}");
            previous = l;
        }
        assert_eq!(device_colour(0.0), VIRIDIS[0]);
        assert_eq!(device_colour(1.0), VIRIDIS[8]);
        assert!(luminance(device_colour(1.0)) > 10.0 * luminance(device_colour(0.0)));
        assert_eq!(device_colour(-3.0), device_colour(0.0));
        assert_eq!(device_colour(7.0), device_colour(1.0));
        assert_eq!(device_colour(f64::NAN), device_colour(0.0));
        assert_ne!(hex(device_colour(0.0)), GREY_UNKNOWN);
    }
}
