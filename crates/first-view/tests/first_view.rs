//! The first view shows the page's numbers or nothing: its rows are the ones the page's
//! functions list for the same query (same configurations, same order, same texts), and every case
//! the page must explain itself draws nothing.

use fmperf_app::query::Query;
use fmperf_app::{error_bands, explorer, fmt, results};
use fmperf_core::explore::{ExploreSearch, ReportContext};
use fmperf_core::format::custom_store::CustomStore;
use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::search::code::format_candidate;
use fmperf_first_view::page::{FirstView, MAX_CANDIDATES, ahead, render};

/// A clock that never advances (the budget never runs out).
fn frozen() -> impl FnMut() -> f64 {
    || 0.0
}

fn draw(search: &str) -> Option<FirstView> {
    render(search, None, f64::INFINITY, &mut frozen())
}

/// The values of `attr` on the table's rows, in order.
fn row_attr(html: &str, attr: &str) -> Vec<String> {
    let body = &html[html.find("<tbody>").expect("a table body")..];
    let key = format!(" {attr}=\"");
    body.match_indices("<tr")
        .map(|(i, _)| {
            let row = &body[i..];
            let start = row.find(&key).expect("the attribute") + key.len();
            row[start..start + row[start..].find('"').unwrap()].to_string()
        })
        .collect()
}

/// The scenario the page searches for `search`.
fn spec_of(search: &str, entries: &UserEntries) -> ExploreSpec {
    let q = Query::parse(search);
    let mode = explorer::mode_from_query(&q).unwrap();
    fmperf_app::jobs::explore_spec(&explorer::fields_from_query(&q), &mode, entries).unwrap()
}

/// What the page lists for `search`: the leading row of each placement group, as `data-config`
/// and throughput cell text, with the page's resolution, search, list and filter.
fn page_rows(search: &str, entries: &UserEntries) -> Vec<(String, String)> {
    let q = Query::parse(search);
    let spec = spec_of(search, entries);
    let ctx = ReportContext::new(&spec).unwrap();
    let mut s = ExploreSearch::new(spec).unwrap();
    while !s.step(10_000) {}
    let mut reports = results::reports(&ctx, &s.result(), explorer::list_from_query(&q));
    if q.get(explorer::ONLY) == Some("mainstream") {
        reports.retain(|r| !results::is_research(r.candidate.strategy));
    }
    let keys: Vec<_> = reports.iter().map(|r| (r.candidate, r.experts)).collect();
    results::collapse_rows(&keys)
        .into_iter()
        .map(|(lead, _)| {
            let r = &reports[lead];
            (format_candidate(&r.candidate), fmt::throughput(r.throughput_samples_per_s))
        })
        .collect()
}

fn assert_same_rows(search: &str) -> FirstView {
    let v = draw(search).unwrap_or_else(|| panic!("{search}: nothing drawn"));
    let expected = page_rows(search, &UserEntries::default());
    assert!(!expected.is_empty(), "{search}");
    assert_eq!(row_attr(&v.html, "data-config"), expected.iter().map(|e| e.0.clone()).collect::<Vec<_>>(), "{search}");
    for (_, tp) in &expected {
        assert!(v.html.contains(&format!(r#"<td class="num throughput">{tp}</td>"#)), "{search}: {tp}");
    }
    assert_eq!(v.rows, expected.len());
    v
}

#[test]
fn the_default_scenario_shows_the_page_rows() {
    let v = assert_same_rows("");
    // The default scenario, in extended mode, with the page's shell and texts.
    assert!(v.html.contains("Llama 3 70B"), "the model's name");
    assert!(v.html.contains(r#"data-mode="extended""#));
    assert!(v.html.contains(r#"<nav class="nav" aria-label="Views">"#));
    assert!(v.html.contains(r#"<a href="?view=explorer" aria-current="page">Explorer</a>"#));
    assert!(v.html.starts_with("<style>") && v.html.contains(".results"), "the explorer's stylesheet");
    // The first row is the selected one; the throughput attribute is the exact number.
    assert_eq!(v.html.matches(r#"<tr class="selected""#).count(), 1);
    let tp: f64 = row_attr(&v.html, "data-throughput")[0].parse().unwrap();
    assert!(tp > 0.0);
    assert!(v.html.contains("1,024 devices"), "the summary counts with grouping");
}

#[test]
fn lists_filters_selection_and_embedding_follow_the_url() {
    assert_same_rows("?list=1d");
    assert_same_rows("?list=2d-seqp&only=mainstream");
    assert_same_rows("?mode=reference&model=gpt3&gpus=1024");
    assert_same_rows("?mode=extended&model=mixtral-8x7b&gpus=64&batch=512");
    let second = row_attr(&draw("?mode=reference").unwrap().html, "data-config")[1].clone();
    let v = draw(&format!("?mode=reference&sel={second}")).unwrap();
    let at = v.html.find(&format!(r#"data-config="{second}""#)).unwrap();
    let row_start = v.html[..at].rfind("<tr").unwrap();
    assert!(v.html[row_start..].starts_with(r#"<tr class="selected""#), "the row `sel` names is selected");
    assert_eq!(v.html.matches(r#"<tr class="selected""#).count(), 1);
    assert!(!draw("").unwrap().html.contains(r#"class="app embed""#));
    assert!(draw("?embed=1").unwrap().html.contains(r#"class="app embed""#));
    assert!(draw("?view=explorer").is_some());
}

#[test]
fn what_the_page_must_explain_is_not_drawn() {
    for search in [
        "?view=studies",
        "?view=catalog",
        "?view=nope",
        "?gpus=abc",
        "?mode=nonsense",
        "?model=no-such-model",
        "?mode=reference&model=mixtral-8x7b",
        "?gpus=3",
    ] {
        assert!(draw(search).is_none(), "{search}: drawn");
    }
    // An MoE model in extended mode is drawn (a URL naming a scenario and no mode is an old
    // permalink, read in reference mode).
    assert!(draw("?mode=extended&model=mixtral-8x7b&gpus=64&batch=512").is_some());
    // A URL with its mode takes the page's defaults for what it leaves out, never the old
    // permalinks' (issue 29): Mixtral has no batch of its own, so the page asks for one.
    assert!(draw("?mode=extended&model=mixtral-8x7b&gpus=64").is_none());
}

#[test]
fn a_search_over_its_budget_or_too_large_is_left_to_the_page() {
    // Each look at the clock is 100 ms later: the default search gives up at once with 50 ms.
    let mut t = 0.0;
    let mut clock = move || {
        t += 100.0;
        t
    };
    assert!(render("", None, 50.0, &mut clock).is_none());
    // Two million candidates: given up after its first strategy's list, before evaluating.
    let mut reads = 0;
    let mut counting = || {
        reads += 1;
        0.0
    };
    let big = "?model=gpt3&strategies=2d&gpus=16384&nvs=64&batch=735134400";
    assert!(render(big, None, f64::INFINITY, &mut counting).is_none());
    assert!(reads <= 2, "{reads} clock reads");
    let mut s = ExploreSearch::new(spec_of(big, &UserEntries::default())).unwrap();
    s.step(1);
    assert!(s.progress().1 > MAX_CANDIDATES, "the example is larger than the limit: {:?}", s.progress());
}

#[test]
fn the_users_own_model_is_found_and_its_name_escaped() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/own/my-10b.json")).unwrap();
    let text = text.replace("\"My 10B\"", "\"My <10B> & co\"");
    let doc = fmperf_core::format::parse(&text).unwrap();
    let mut store = CustomStore::default();
    store.add(doc).unwrap();
    let stored = store.to_text();
    let search = "?model=my-10b&gpus=256";
    let v = render(search, Some(&stored), f64::INFINITY, &mut frozen()).expect("drawn");
    assert!(v.html.contains("My &lt;10B&gt; &amp; co") && !v.html.contains("<10B>"));
    let expected = page_rows(search, &CustomStore::parse(Some(&stored)).user_entries());
    assert_eq!(row_attr(&v.html, "data-config"), expected.into_iter().map(|e| e.0).collect::<Vec<_>>());
    // Without the store the model is unknown: the page says so.
    assert!(render(search, None, f64::INFINITY, &mut frozen()).is_none());
    // An unreadable store is no store.
    assert!(render("", Some("{not json"), f64::INFINITY, &mut frozen()).is_some());
}

#[test]
fn the_error_bar_is_the_pages() {
    for search in [
        "",
        "?mode=reference",
        "?mode=extended&model=mixtral-8x7b&gpus=64&batch=512",
        "?mode=extended&system=amd_mi300x&gpus=256",
    ] {
        let spec = spec_of(search, &UserEntries::default());
        let page = error_bands::band(&spec);
        assert!(page.is_some(), "{search}");
        assert_eq!(error_bands::cached_band(&spec), page, "{search}: the cache is current");
        let b = page.unwrap();
        let v = draw(search).unwrap_or_else(|| panic!("{search}: nothing drawn"));
        assert!(v.html.contains(&fmperf_first_view::html::escape(&error_bands::line(&b))), "{search}");
    }
}

#[test]
fn drawn_ahead_it_is_the_same_view_without_the_time() {
    for search in ["", "?mode=reference&list=1d"] {
        let now = draw(search).unwrap();
        let before = ahead(search).unwrap();
        assert_eq!(now.html.matches(" candidates in 0 ms, ").count(), 1, "{search}");
        assert_eq!(before.html, now.html.replace(" candidates in 0 ms, ", " candidates, "), "{search}");
        assert_eq!(before.rows, now.rows);
    }
    assert!(ahead("?view=studies").is_none());
    // The boot script shows the default page's for `?view=explorer` too: the same page.
    assert_eq!(ahead("?view=explorer"), ahead(""));
}
