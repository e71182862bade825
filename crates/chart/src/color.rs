//! sRGB colours: parsing and printing `#rrggbb`, interpolation, WCAG relative luminance and
//! contrast ratio, and CIELAB distance (used by the tests that keep the palettes distinguishable).

use std::fmt;

/// An opaque sRGB colour with 8-bit channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

impl Rgb {
    /// A colour from its three 8-bit channels.
    pub const fn new(r: u8, g: u8, b: u8) -> Rgb {
        Rgb { r, g, b }
    }

    /// Parses `#rrggbb` or `#rgb` (the `#` is optional, hex digits in either case).
    /// Returns `None` for anything else.
    pub fn parse_hex(text: &str) -> Option<Rgb> {
        let hex = text.trim().strip_prefix('#').unwrap_or(text.trim());
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let digit = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
        let pair = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        match hex.len() {
            3 => Some(Rgb::new(digit(0)? * 17, digit(1)? * 17, digit(2)? * 17)),
            6 => Some(Rgb::new(pair(0)?, pair(2)?, pair(4)?)),
            _ => None,
        }
    }

    /// Const constructor from `0xRRGGBB`.
    pub const fn from_u32(rgb: u32) -> Rgb {
        Rgb::new((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8)
    }

    /// The CSS form `#rrggbb` (lower case).
    pub fn to_hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }

    /// Linear interpolation in sRGB between `self` (t = 0) and `other` (t = 1); `t` is clamped to
    /// [0, 1], each channel is rounded to the nearest integer.
    pub fn lerp(self, other: Rgb, t: f64) -> Rgb {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb::new(mix(self.r, other.r), mix(self.g, other.g), mix(self.b, other.b))
    }

    /// The channels as linear-light values in [0, 1] (the sRGB transfer function undone).
    pub fn to_linear(self) -> [f64; 3] {
        [self.r, self.g, self.b].map(|c| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
        })
    }

    /// WCAG 2 relative luminance in [0, 1] (0 = black, 1 = white).
    pub fn luminance(self) -> f64 {
        let [r, g, b] = self.to_linear();
        0.2126 * r + 0.7152 * g + 0.0722 * b
    }

    /// WCAG 2 contrast ratio between two colours, in [1, 21]. Graphical objects (lines, markers)
    /// need at least 3:1 against their background, body text 4.5:1.
    pub fn contrast(self, other: Rgb) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }

    /// Black or white, whichever contrasts more with `self` (for labels drawn on a filled cell).
    pub fn readable_text(self) -> Rgb {
        let (black, white) = (Rgb::new(0, 0, 0), Rgb::new(255, 255, 255));
        if self.contrast(black) >= self.contrast(white) { black } else { white }
    }

    /// CIELAB (D65 white) coordinates `[L*, a*, b*]` of a linear-light RGB triple.
    pub fn lab_of_linear(linear: [f64; 3]) -> [f64; 3] {
        let [r, g, b] = linear;
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let delta: f64 = 6.0 / 29.0;
        let f = |t: f64| if t > delta.powi(3) { t.cbrt() } else { t / (3.0 * delta * delta) + 4.0 / 29.0 };
        let (fx, fy, fz) = (f(x), f(y), f(z));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    /// CIELAB coordinates of this colour.
    pub fn lab(self) -> [f64; 3] {
        Rgb::lab_of_linear(self.to_linear())
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

/// CIE76 colour difference ΔE*ab: Euclidean distance in CIELAB. About 2.3 is a just-noticeable
/// difference; series colours should be much further apart (we aim for > 12).
pub fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter().zip(b.iter()).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_short_form() {
        assert_eq!(Rgb::parse_hex("#0072B2"), Some(Rgb::new(0, 0x72, 0xb2)));
        assert_eq!(Rgb::parse_hex("0072b2").unwrap().to_hex(), "#0072b2");
        assert_eq!(Rgb::parse_hex("#fa0"), Some(Rgb::new(255, 170, 0)));
        assert_eq!(Rgb::parse_hex(" #ffffff "), Some(Rgb::new(255, 255, 255)));
        for bad in ["", "#", "#12345", "#gg0000", "rgb(1,2,3)", "#1234567"] {
            assert_eq!(Rgb::parse_hex(bad), None, "{bad}");
        }
        assert_eq!(Rgb::from_u32(0x123456), Rgb::new(0x12, 0x34, 0x56));
        assert_eq!(format!("{}", Rgb::new(1, 2, 3)), "#010203");
    }

    #[test]
    fn lerp_endpoints_midpoint_and_clamp() {
        let (a, b) = (Rgb::new(0, 100, 200), Rgb::new(255, 0, 100));
        assert_eq!(a.lerp(b, 0.0), a);
        assert_eq!(a.lerp(b, 1.0), b);
        assert_eq!(a.lerp(b, 0.5), Rgb::new(128, 50, 150));
        assert_eq!(a.lerp(b, -3.0), a);
        assert_eq!(a.lerp(b, 7.0), b);
        assert_eq!(a.lerp(b, f64::NAN), a);
    }

    #[test]
    fn wcag_luminance_and_contrast_known_values() {
        let (black, white) = (Rgb::new(0, 0, 0), Rgb::new(255, 255, 255));
        assert_eq!(black.luminance(), 0.0);
        assert!((white.luminance() - 1.0).abs() < 1e-12);
        assert!((black.contrast(white) - 21.0).abs() < 1e-9);
        assert!((white.contrast(white) - 1.0).abs() < 1e-12);
        // #777777 on white is the classic "just below 4.5:1" grey (4.48:1).
        let grey = Rgb::parse_hex("#777777").unwrap();
        assert!((grey.contrast(white) - 4.48).abs() < 0.01, "{}", grey.contrast(white));
        assert_eq!(Rgb::new(253, 231, 37).readable_text(), black);
        assert_eq!(Rgb::new(68, 1, 84).readable_text(), white);
    }

    #[test]
    fn lab_reference_points() {
        let white = Rgb::new(255, 255, 255).lab();
        assert!((white[0] - 100.0).abs() < 0.01 && white[1].abs() < 0.05 && white[2].abs() < 0.05, "{white:?}");
        assert_eq!(Rgb::new(0, 0, 0).lab(), [0.0, 0.0, 0.0]);
        // sRGB red is L* ≈ 53.2, a* ≈ 80.1, b* ≈ 67.2.
        let red = Rgb::new(255, 0, 0).lab();
        assert!((red[0] - 53.24).abs() < 0.1 && (red[1] - 80.09).abs() < 0.2 && (red[2] - 67.20).abs() < 0.2);
        assert!((delta_e(white, [0.0, 0.0, 0.0]) - 100.0).abs() < 0.01);
    }
}
