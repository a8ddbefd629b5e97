//! Plain text tables for the command line (`toolhost list`, `toolhost
//! audit`): a header row and rows of cells, each column as wide as its
//! widest cell, two spaces between columns, no trailing spaces.

use std::io::Write;

/// Writes `header` and `rows` to `out` as aligned columns.
pub fn write<const N: usize>(
    out: &mut impl Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> std::io::Result<()> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header = header.map(str::to_string);
    for row in std::iter::once(&header).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let mut out = Vec::new();
        let rows = [
            ["a".to_string(), "long cell".to_string()],
            ["wider".into(), "x".into()],
        ];
        super::write(&mut out, ["H1", "H2"], &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "H1     H2\na      long cell\nwider  x\n"
        );
    }
}
