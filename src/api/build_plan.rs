//! `BuildPlan`: how one index build is made. Every way of building — `ken index build`, a
//! first stage (`--quick`, a server's first build), a server's reindex, a fleet worker, the
//! agent's first index — fills one in and runs it; the embedding model is chosen here and
//! nowhere else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::index::{BuildObserver, BuildReport, IndexBuilder, IndexConfig, IndexError, IndexStore, Manifest};
use crate::providers::embedder_from_settings;
use crate::vector::Embedder;

/// Which model the semantic part is embedded with.
#[derive(Clone, Default)]
pub enum EmbedderChoice {
    /// The one the index's current generation was built with (the built-in one for a new
    /// index, or one without a semantic part).
    #[default]
    Stored,
    /// This model; `None` is the built-in one.
    Given(Option<Arc<dyn Embedder>>),
}

/// One build: the tree, its configuration, the model, and the generation it may trust.
#[derive(Clone)]
pub struct BuildPlan {
    pub root: PathBuf,
    pub config: IndexConfig,
    pub embedder: EmbedderChoice,
    /// A generation this process committed itself, reused without verifying it again (a
    /// resident server's reindex).
    pub trusted: Option<u64>,
}

impl BuildPlan {
    /// `config` for `root`, with the stored model.
    pub fn new(root: &Path, config: IndexConfig) -> BuildPlan {
        BuildPlan {
            root: root.to_path_buf(),
            config,
            embedder: EmbedderChoice::Stored,
            trusted: None,
        }
    }

    /// The default build of `root`, embedding with the model the index was built with: what
    /// `ken index build` with no options, `ken index pull`'s update and a fleet worker do.
    pub fn default_for(root: &Path, index_dir: Option<PathBuf>) -> BuildPlan {
        BuildPlan::new(
            root,
            IndexConfig {
                index_dir,
                ..IndexConfig::default()
            },
        )
    }

    /// The first stage of a two-stage build: symbols and the lexical part, the rest recorded
    /// as deferred for the next build (a server's first build, `ken index build --quick`).
    pub fn first_stage(root: &Path, index_dir: Option<PathBuf>) -> BuildPlan {
        BuildPlan::new(
            root,
            IndexConfig {
                index_dir,
                first_stage: true,
                ..IndexConfig::default()
            },
        )
    }

    pub fn with_embedder(self, embedder: EmbedderChoice) -> BuildPlan {
        BuildPlan { embedder, ..self }
    }

    pub fn trusting(self, generation: Option<u64>) -> BuildPlan {
        BuildPlan {
            trusted: generation,
            ..self
        }
    }

    /// Builds and commits a generation.
    pub fn run(&self, observer: &dyn BuildObserver) -> Result<BuildReport, IndexError> {
        self.builder(observer)?.build()
    }

    /// The builder this plan runs (its root canonical), the model chosen: for a caller that
    /// names the root in its messages.
    pub fn builder<'a>(&'a self, observer: &'a dyn BuildObserver) -> Result<IndexBuilder<'a>, IndexError> {
        let builder = IndexBuilder::new(&self.root, &self.config, observer)?;
        let embedder = self.embedder(builder.root())?;
        Ok(builder.with_embedder(embedder).trusting(self.trusted))
    }

    /// The model this build embeds with; none when it embeds nothing.
    fn embedder(&self, root: &Path) -> Result<Option<Arc<dyn Embedder>>, IndexError> {
        if !self.config.vectors || self.config.first_stage {
            return Ok(None);
        }
        match &self.embedder {
            EmbedderChoice::Given(e) => Ok(e.clone()),
            EmbedderChoice::Stored => {
                // A missing or unreadable index: the built-in model.
                let store = IndexStore::new(self.config.index_dir_for(root));
                match store.current().ok().flatten().map(|g| store.read_manifest(g)) {
                    Some(Ok(m)) => stored_embedder(&m),
                    _ => Ok(None),
                }
            }
        }
    }
}

/// The model a generation's semantic part was built with (`None`: the built-in one).
pub fn stored_embedder(manifest: &Manifest) -> Result<Option<Arc<dyn Embedder>>, IndexError> {
    let Some(settings) = manifest.parts.vectors.as_ref().and_then(|v| v.embedder.as_ref()) else {
        return Ok(None);
    };
    embedder_from_settings(settings).map(Some).map_err(|e| {
        IndexError::Vector(format!(
            "cannot reach the embedding model this index was built with: {e}"
        ))
    })
}
