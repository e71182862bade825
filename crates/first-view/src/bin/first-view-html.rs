//! `first-view-html [QUERY]`: prints the explorer's first view of the page at `?QUERY` (empty: the
//! page's default), drawn ahead ([`fmperf_first_view::page::ahead`]). A build step
//! (`scripts/build.sh`) writes the default page's into `dist/`, and `scripts/postbuild.py` puts it
//! in `index.html` for the boot script to show before any WebAssembly has loaded.

fn main() {
    let query = std::env::args().nth(1).unwrap_or_default();
    match fmperf_first_view::page::ahead(&query) {
        Some(view) => print!("{}", view.html),
        None => {
            eprintln!(
                "first-view-html: the page at `?{query}` has no first view (another view, a problem, or nothing found)"
            );
            std::process::exit(1);
        }
    }
}
