//! Reading a host's Prometheus endpoint: one scrape parsed into samples by
//! name and labels, for tests that check what the counters say.

use std::collections::BTreeMap;

/// One scrape: each sample's name and labels, and its value.
pub struct Scrape {
    /// Each sample by name and labels.
    pub samples: BTreeMap<(String, BTreeMap<String, String>), f64>,
    /// The text as served.
    pub text: String,
}

impl Scrape {
    /// Scrapes `url` again until `done` holds for a scrape (at most 30 s:
    /// past it, panics naming `what`); that scrape.
    pub async fn until(url: &str, what: &str, done: impl Fn(&Scrape) -> bool) -> Scrape {
        let scraped = async {
            loop {
                let scrape = Scrape::of(url).await;
                if done(&scrape) {
                    break scrape;
                }
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), scraped)
            .await
            .unwrap_or_else(|_| panic!("{what}: not within 30 s"))
    }

    /// GETs `url` and parses the text format.
    pub async fn of(url: &str) -> Scrape {
        let response = reqwest::get(url)
            .await
            .expect("the metrics endpoint answers");
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        let text = response.text().await.unwrap();
        let mut samples = BTreeMap::new();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let (series, value) = line.rsplit_once(' ').expect("name and value");
            let (name, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, labels.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels: BTreeMap<String, String> = labels
                .split("\",")
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
                    (k.to_string(), v.trim_end_matches('"').to_string())
                })
                .collect();
            samples.insert((name.to_string(), labels), value.parse().unwrap());
        }
        Scrape { samples, text }
    }

    /// The value of `name` with exactly `labels`, 0 when absent.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .get(&(name.to_string(), labels))
            .copied()
            .unwrap_or(0.0)
    }

    /// The sum of `name` over every series whose labels include `labels`.
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|((n, l), _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
            })
            .map(|(_, v)| v)
            .sum()
    }

    /// Expects `name{labels}` to be `value`.
    pub fn expect(&self, name: &str, labels: &[(&str, &str)], value: f64) {
        assert_eq!(
            self.get(name, labels),
            value,
            "{name}{labels:?} in:\n{}",
            self.text
        );
    }
}
