//! The one table the harness prints: a row per figure, in the order of the
//! measurements, rendered as a markdown table whose columns are padded so it
//! reads as well in a terminal as in `docs/benchmarks.md`.

use crate::stats::{self, Samples};

/// Rows `id` for the p50 and p99 of `measured` against `baseline`, the
/// latter named `baseline_name` in the baseline column; `what("p50")` says
/// what each row measured.
pub fn percentile_rows(
    id: &'static str,
    what: impl Fn(&str) -> String,
    measured: &Samples,
    baseline_name: &str,
    baseline: &Samples,
) -> Vec<Row> {
    [("p50", 50.0), ("p99", 99.0)]
        .into_iter()
        .map(|(name, p)| {
            let (m, b) = (measured.percentile(p), baseline.percentile(p));
            Row::figure(id, what(name), stats::duration(m)).against(
                format!("{baseline_name} {}", stats::duration(b)),
                stats::duration_ratio(m, b),
            )
        })
        .collect()
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The measurement's number (1–9, as in `docs/benchmarks.md`).
    pub id: &'static str,
    /// What was measured, and how much of it.
    pub what: String,
    /// The figure for toolhost.
    pub toolhost: String,
    /// The figure it is compared with, named.
    pub baseline: String,
    /// toolhost ÷ baseline.
    pub ratio: String,
    /// The target and whether it is met; empty when there is none.
    pub target: String,
}

impl Row {
    /// A row with a figure and nothing to compare it with.
    pub fn figure(id: &'static str, what: impl Into<String>, toolhost: impl Into<String>) -> Row {
        Row {
            id,
            what: what.into(),
            toolhost: toolhost.into(),
            baseline: "—".into(),
            ratio: "—".into(),
            target: "—".into(),
        }
    }

    /// A row saying why a measurement did not run.
    pub fn skipped(id: &'static str, what: impl Into<String>, why: impl Into<String>) -> Row {
        Row::figure(id, what, format!("skipped: {}", why.into()))
    }

    /// A row saying that a measurement failed, with the error's chain.
    pub fn failed(id: &'static str, what: impl Into<String>, error: &anyhow::Error) -> Row {
        let message = format!("{error:#}").replace('|', "/").replace('\n', " ");
        Row::figure(id, what, format!("FAILED: {message}"))
    }

    /// Sets the baseline and the ratio.
    pub fn against(mut self, baseline: impl Into<String>, ratio: impl Into<String>) -> Row {
        self.baseline = baseline.into();
        self.ratio = ratio.into();
        self
    }

    /// Sets the target column.
    pub fn target(mut self, target: impl Into<String>) -> Row {
        self.target = target.into();
        self
    }

    fn cells(&self) -> [&str; 6] {
        [
            self.id,
            &self.what,
            &self.toolhost,
            &self.baseline,
            &self.ratio,
            &self.target,
        ]
    }
}

/// Renders `rows` as a padded markdown table.
pub fn render(rows: &[Row]) -> String {
    let header = [
        "#",
        "measurement",
        "toolhost",
        "baseline",
        "toolhost / baseline",
        "target",
    ];
    let mut widths = header.map(width);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row.cells()) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - width(cell))))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(header);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
    for row in rows {
        out.push_str(&line(row.cells()));
    }
    out
}

/// Display width: characters, which is right for the text the harness
/// writes (`µ`, `×`, `≤` are one column each).
fn width(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_padded_markdown_table() {
        let rows = vec![
            Row::figure("1", "echo p50", "90 µs")
                .against("native 60 µs", "1.50×")
                .target("≤ 1.5×: met"),
            Row::skipped("6", "list_orders", "statuspro_*.wasm missing"),
        ];
        let text = render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("| # | measurement"));
        assert!(lines[1].starts_with("|---|"));
        assert!(lines[3].contains("skipped: statuspro_*.wasm missing"));
        let widths: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{text}");
    }
}
