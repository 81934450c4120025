//! The JSON-lines output format shared by all benchmarks.

/// One measured figure; `baseline` is measured in the same run.
pub struct Figure<'a> {
    pub name: &'a str,
    pub value: f64,
    pub unit: &'a str,
    pub baseline: Option<f64>,
    /// Extra numeric context (scale, threads, …).
    pub extra: Vec<(&'a str, f64)>,
    /// Extra text context (policy, system, …).
    pub labels: Vec<(&'a str, &'a str)>,
}

impl<'a> Figure<'a> {
    pub fn new(name: &'a str, value: f64, unit: &'a str) -> Self {
        Self {
            name,
            value,
            unit,
            baseline: None,
            extra: Vec::new(),
            labels: Vec::new(),
        }
    }

    pub fn baseline(mut self, baseline: f64) -> Self {
        self.baseline = Some(baseline);
        self
    }

    pub fn with(mut self, key: &'a str, value: f64) -> Self {
        self.extra.push((key, value));
        self
    }

    pub fn with_label(mut self, key: &'a str, value: &'a str) -> Self {
        self.labels.push((key, value));
        self
    }

    pub fn print(&self) {
        let mut line = format!(
            r#"{{"name": "{}", "value": {}, "unit": "{}""#,
            self.name,
            number(self.value),
            self.unit
        );
        if let Some(b) = self.baseline {
            line += &format!(
                r#", "baseline": {}, "ratio": {}"#,
                number(b),
                number(self.value / b)
            );
        }
        for (k, v) in &self.labels {
            line += &format!(r#", "{k}": "{v}""#);
        }
        for (k, v) in &self.extra {
            line += &format!(r#", "{k}": {}"#, number(*v));
        }
        println!("{line}}}");
    }
}

fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{:.4e}", x).replace("e0", "")
    } else {
        "null".into()
    }
}
