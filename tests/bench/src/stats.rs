//! Samples, percentiles, and how figures are written in the table.
//!
//! Percentiles use the nearest-rank method on the sorted samples, so a p99
//! of 2000 samples is the 1980th fastest call: a real observation, never an
//! interpolation.

use std::time::Duration;

/// A set of timings.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Every observation, unsorted.
    values: Vec<Duration>,
}

impl Samples {
    /// Adds the observations of `other`.
    pub fn extend(&mut self, other: impl IntoIterator<Item = Duration>) {
        self.values.extend(other);
    }

    /// Every observation, in the order they were added.
    pub fn values(&self) -> &[Duration] {
        &self.values
    }

    /// How many observations there are.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// The `p`-th percentile (0–100) by nearest rank; zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.values.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.values.clone();
        sorted.sort_unstable();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    /// The median.
    pub fn p50(&self) -> Duration {
        self.percentile(50.0)
    }

    /// The fastest observation.
    pub fn min(&self) -> Duration {
        self.values.iter().min().copied().unwrap_or_default()
    }

    /// The slowest observation.
    pub fn max(&self) -> Duration {
        self.values.iter().max().copied().unwrap_or_default()
    }
}

/// The median of `values` (the mean of the middle two when their number
/// is even); `None` when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// A duration with a unit that keeps three significant figures or so:
/// `87 µs`, `1.42 ms`, `2.31 s`.
pub fn duration(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 {
        format!("{micros:.0} µs")
    } else if micros < 10_000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else if micros < 1_000_000.0 {
        format!("{:.0} ms", micros / 1000.0)
    } else {
        format!("{:.2} s", micros / 1e6)
    }
}

/// `a / b` as `1.37×`.
pub fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        return "—".to_string();
    }
    let r = a / b;
    if r < 0.1 {
        format!("{r:.3}×")
    } else {
        format!("{r:.2}×")
    }
}

/// `a / b` for durations.
pub fn duration_ratio(a: Duration, b: Duration) -> String {
    ratio(a.as_secs_f64(), b.as_secs_f64())
}

/// KiB as MiB with one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// A signed KiB difference as MiB with one decimal: `+1.2 MiB`.
pub fn mib_delta(kib: i64) -> String {
    format!("{:+.1} MiB", kib as f64 / 1024.0)
}

/// A whole number with thousands separators: `10,000`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether a target is met, as the table writes it.
pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut s = Samples::default();
        s.extend((1..=100).map(Duration::from_millis));
        assert_eq!(s.p50(), Duration::from_millis(50));
        assert_eq!(s.percentile(99.0), Duration::from_millis(99));
        assert_eq!(s.percentile(100.0), Duration::from_millis(100));
        assert_eq!(s.percentile(0.0), Duration::from_millis(1));
        assert_eq!(Samples::default().p50(), Duration::ZERO);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[1.3, 0.9, 1.1, 1.0, 1.2]), Some(1.1));
        assert_eq!(median(&[2.0, 1.0]), Some(1.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn figures_are_written_readably() {
        assert_eq!(duration(Duration::from_micros(87)), "87 µs");
        assert_eq!(duration(Duration::from_micros(1420)), "1.42 ms");
        assert_eq!(duration(Duration::from_millis(42)), "42 ms");
        assert_eq!(duration(Duration::from_millis(2310)), "2.31 s");
        assert_eq!(ratio(3.0, 2.0), "1.50×");
        assert_eq!(ratio(1.0, 0.0), "—");
        assert_eq!(count(10_000), "10,000");
        assert_eq!(count(999), "999");
        assert_eq!(mib_delta(-512), "-0.5 MiB");
    }
}
