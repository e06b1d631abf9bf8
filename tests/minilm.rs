//! The local transformer embedder (`--features minilm`): candle's run of all-MiniLM-L6-v2
//! matches reference values from an independent forward pass (and the published
//! sentence-transformers similarities), batching does not change a vector, and a whole build
//! and semantic search run with it. Needs the weights from models/all-MiniLM-L6-v2/fetch.sh;
//! without them the tests say so and pass, unless KEN_REQUIRE_MINILM is set (CI sets it).
#![cfg(feature = "minilm")]

mod support;

use std::sync::Arc;

use kenning::index::{IndexBuilder, IndexConfig, IndexSnapshot, NoProgress};
use kenning::providers::{MINILM_DIR, minilm, models_dir};
use kenning::vector::Embedder;

fn model() -> Option<Arc<dyn Embedder>> {
    if !models_dir().join(MINILM_DIR).join("model.safetensors").is_file() {
        assert!(
            std::env::var_os("KEN_REQUIRE_MINILM").is_none(),
            "KEN_REQUIRE_MINILM is set but the weights are missing: run models/all-MiniLM-L6-v2/fetch.sh"
        );
        eprintln!("skipped: all-MiniLM-L6-v2 weights not fetched (models/all-MiniLM-L6-v2/fetch.sh)");
        return None;
    }
    Some(minilm().unwrap())
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn matches_the_reference_forward_pass() {
    let Some(m) = model() else { return };
    assert_eq!(m.dim(), 384);
    let texts = [
        "The cat sits outside",
        "A man is playing guitar",
        "The new movie is awesome",
        "The new movie is so great",
        "The cat plays in the garden",
    ];
    let v = m.embed(&texts).unwrap();
    let want_cat = [
        0.139191, 0.003029, 0.047015, 0.039574, -0.047999, -0.006812, 0.015053, 0.033377,
    ];
    let want_guitar = [
        0.022661, -0.001389, -0.005613, -0.067022, -0.155601, -0.002702, 0.078911, -0.012957,
    ];
    for (got, want) in [(&v[0], &want_cat), (&v[1], &want_guitar)] {
        for (g, w) in got.iter().zip(want.iter()) {
            assert!((g - w).abs() < 1e-4, "{:?} vs {want:?}", &got[..8]);
        }
    }
    assert!((cos(&v[2], &v[3]) - 0.8939).abs() < 1e-3, "{}", cos(&v[2], &v[3]));
    assert!((cos(&v[0], &v[4]) - 0.6788).abs() < 1e-3, "{}", cos(&v[0], &v[4]));
    // Alone or padded in a batch with longer texts: the same vector.
    let alone = m.embed(&["The cat sits outside"]).unwrap();
    assert!(cos(&alone[0], &v[0]) > 0.99999);
}

#[test]
fn builds_and_searches_an_index() {
    let Some(m) = model() else { return };
    let repo = support::materialize(
        r#"
//- src/network.py
def retry_request(url, attempts=3):
    """Sends the HTTP request again when the connection drops."""
    for _ in range(attempts):
        send(url)
//- src/render.py
def render_template(name, context):
    """Fills an HTML template with values."""
    return engine.render(name, context)
//- src/auth.py
def check_password(user, password):
    """Compares a password with the stored hash."""
    return verify(user.hash, password)
"#,
    );
    let config = IndexConfig::default();
    let r = IndexBuilder::new(repo.path(), &config, &NoProgress)
        .unwrap()
        .with_embedder(Some(m.clone()))
        .build()
        .unwrap();
    let part = r.manifest.parts.vectors.as_ref().unwrap();
    assert_eq!(part.model, "all-MiniLM-L6-v2@128", "{part:?}");
    assert_eq!(
        part.embedder,
        Some(kenning::vector::StoredEmbedder::Local {
            local: "all-MiniLM-L6-v2".into()
        })
    );
    let snap = IndexSnapshot::open(&r.index_dir).unwrap();
    let semantic = snap.semantic_with(Some(m)).unwrap();
    let hits = semantic.search("verify a user's login secret", 3).unwrap();
    assert_eq!(hits[0].path, "src/auth.py", "{hits:?}");
    // Opening it with the built-in model is refused rather than mixing vector spaces.
    assert!(snap.semantic().is_err());
}
