//! The page's top-level views, named in the URL (`?view=…`), and the words of the shell around
//! them (tagline, footer): one home for the page's shell and its first view.

/// The URL key naming the view.
pub const VIEW_KEY: &str = "view";

/// The URL key that embeds the page (`embed=1`: no header or footer; `embed=0` or absent: the
/// whole page).
pub const EMBED_KEY: &str = "embed";

/// Whether `q` asks for the embedded page.
pub fn is_embedded(q: &crate::query::Query) -> bool {
    q.get(EMBED_KEY).is_some_and(|v| v != "0")
}

/// The header's tagline.
pub const TAGLINE: &str = "Training performance of foundation models, computed in your browser";

/// The footer's two sentences.
pub const FOOTER: [&str; 2] = [
    "fmperf implements the analytical model of Subramanian et al. (PMBS 2024) and the measurements of ",
    "Emani et al. (2023). Everything runs locally: no server, no network after load.",
];

/// The app's top-level views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppView {
    /// One scenario → best configurations (default).
    Explorer,
    /// Sweeps and the presets that regenerate the papers' figures.
    Studies,
    /// Model and system catalogs.
    Catalog,
    /// Predicted against measured training runs.
    Validation,
    /// About the models and the data behind them.
    About,
}

impl AppView {
    /// Every view, in the navigation's order.
    pub const ALL: [AppView; 5] =
        [AppView::Explorer, AppView::Studies, AppView::Catalog, AppView::Validation, AppView::About];

    /// The view's value of [`VIEW_KEY`].
    pub fn key(self) -> &'static str {
        match self {
            AppView::Explorer => "explorer",
            AppView::Studies => "studies",
            AppView::Catalog => "catalog",
            AppView::Validation => "validation",
            AppView::About => "about",
        }
    }

    /// The navigation's label.
    pub fn title(self) -> &'static str {
        match self {
            AppView::Explorer => "Explorer",
            AppView::Studies => "Studies",
            AppView::Catalog => "Catalog",
            AppView::Validation => "Validation",
            AppView::About => "About",
        }
    }

    /// The view a key names; the Explorer when it names none (see [`unknown_view`]).
    pub fn from_key(key: Option<&str>) -> AppView {
        AppView::ALL.into_iter().find(|v| Some(v.key()) == key).unwrap_or(AppView::Explorer)
    }

    /// The view a key names exactly (`None`: absent or unknown).
    pub fn named(key: &str) -> Option<AppView> {
        AppView::ALL.into_iter().find(|v| v.key() == key)
    }
}

/// What the page says when `view=` names no view (it then shows the Explorer).
pub fn unknown_view(q: &crate::query::Query) -> Option<String> {
    let v = q.get(VIEW_KEY)?;
    AppView::named(v).is_none().then(|| {
        let keys: Vec<&str> = AppView::ALL.iter().map(|v| v.key()).collect();
        format!("There is no view “{v}”, so the Explorer is shown. Views: {}.", keys.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;

    #[test]
    fn views_by_key_and_the_unknown_view_notice() {
        assert_eq!(AppView::from_key(None), AppView::Explorer);
        assert_eq!(AppView::from_key(Some("catalog")), AppView::Catalog);
        assert_eq!(AppView::from_key(Some("nope")), AppView::Explorer);
        assert_eq!(AppView::named("nope"), None);
        for v in AppView::ALL {
            assert_eq!(AppView::named(v.key()), Some(v));
        }
        assert!(is_embedded(&Query::parse("?embed=1")) && !is_embedded(&Query::parse("?embed=0")));
        assert!(!is_embedded(&Query::default()));
        assert_eq!(unknown_view(&Query::parse("?view=studies")), None);
        assert_eq!(unknown_view(&Query::parse("?model=x")), None);
        let m = unknown_view(&Query::parse("?view=nope")).unwrap();
        assert!(m.contains("“nope”") && m.ends_with("Views: explorer, studies, catalog, validation, about."), "{m}");
    }
}
