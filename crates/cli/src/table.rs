//! Plain-text tables and CSV for command output.

/// A table: a header row and data rows of already formatted cells.
#[derive(Debug, Default, Clone)]
pub struct Table {
    /// Column titles, with units (e.g. `params [B]`).
    pub header: Vec<String>,
    /// Data rows; each as long as `header`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given column titles.
    pub fn new(header: &[&str]) -> Self {
        Table { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends one row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Renders aligned columns: text left, numbers right.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0usize; n];
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            for (i, c) in row.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let numeric: Vec<bool> = (0..n)
            .map(|i| {
                !self.rows.is_empty()
                    && self.rows.iter().all(|r| r.get(i).is_some_and(|c| c.parse::<f64>().is_ok() || c == "-"))
            })
            .collect();
        let mut s = String::new();
        let line = |row: &Vec<String>, s: &mut String| {
            let cells: Vec<String> = (0..n)
                .map(|i| {
                    let c = row.get(i).map(String::as_str).unwrap_or("");
                    let pad = width[i] - c.chars().count();
                    if numeric[i] { format!("{}{c}", " ".repeat(pad)) } else { format!("{c}{}", " ".repeat(pad)) }
                })
                .collect();
            s.push_str(cells.join("  ").trim_end());
            s.push('\n');
        };
        line(&self.header, &mut s);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        s.push_str(&rule.join("  "));
        s.push('\n');
        for r in &self.rows {
            line(r, &mut s);
        }
        s
    }

    /// Renders CSV (RFC 4180 quoting where needed).
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            let cells: Vec<String> = row.iter().map(|c| csv_cell(c)).collect();
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }
}

/// Quotes a CSV cell if it holds a comma, quote or line break.
pub fn csv_cell(c: &str) -> String {
    if c.contains([',', '"', '\n', '\r']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_quotes() {
        let mut t = Table::new(&["name", "params [B]"]);
        t.push(vec!["gpt3".into(), "173.96".into()]);
        t.push(vec!["a,b".into(), "1.00".into()]);
        let r = t.render();
        assert!(r.contains("gpt3  "));
        assert!(t.to_csv().contains("\"a,b\",1.00"));
    }
}
