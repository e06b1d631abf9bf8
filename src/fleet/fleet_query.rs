//! Scatter-gather across shard groups: one request per group on `ken.query.<group>` (a NATS
//! queue group, so one live replica answers), all under one deadline; the answers are merged
//! by reciprocal rank fusion of each repository's ranking, and a group that does not answer
//! in time, or has no live replica, is named in a partial answer.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FleetError;

/// The reciprocal rank fusion constant of merged rankings.
pub const FLEET_RRF_K: f64 = 60.0;

/// What a root sends a shard group.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardRequest {
    /// A read-only operation of the query API (`search`, `symbol`, `context`, ...).
    pub operation: String,
    /// Its arguments, as for `POST /v1/<operation>`.
    pub args: Value,
}

/// One repository's answer from a shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepoAnswer {
    pub repo: String,
    pub commit: String,
    pub group: String,
    pub answer: Option<Value>,
    pub error: Option<String>,
}

/// What a shard group's replica answers.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardReply {
    pub group: String,
    pub replica: String,
    pub repos: Vec<RepoAnswer>,
    /// Repositories the group owns whose snapshot is still loading (not in `repos`).
    pub loading: Vec<String>,
    pub ms: u64,
    /// The request itself was refused (unknown or writing operation, bad arguments).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GroupAnswer {
    pub group: String,
    /// The replica that answered.
    pub replica: Option<String>,
    pub repos: usize,
    pub ms: u64,
    /// Why the group is missing from the answer.
    pub error: Option<String>,
}

/// One merged result: a repository's `rank`-th result, scored by rank fusion.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MergedHit {
    pub repo: String,
    pub path: String,
    pub line: Option<u64>,
    pub symbol: Option<String>,
    pub rank: usize,
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FleetAnswer {
    pub operation: String,
    pub groups: Vec<GroupAnswer>,
    /// Groups with no answer within the deadline (or no live replica): their repositories
    /// are missing from this answer.
    pub missing_groups: Vec<String>,
    pub partial: bool,
    /// Repositories answered, and those owned by an answering group but still loading.
    pub repos_answered: usize,
    pub loading: Vec<String>,
    /// Each repository's own answer, sorted by repository.
    pub repos: Vec<RepoAnswer>,
    /// `search`: every repository's ranking fused, best first, cut to the request's limit.
    pub merged: Vec<MergedHit>,
    pub deadline_ms: u64,
    pub ms: u64,
}

/// Asks every group in `groups` and merges what comes back within `deadline`.
pub async fn scatter(
    client: &async_nats::Client,
    groups: &[String],
    request: &ShardRequest,
    deadline: Duration,
) -> Result<FleetAnswer, FleetError> {
    let t0 = Instant::now();
    let body =
        bytes::Bytes::from(serde_json::to_vec(request).map_err(|e| FleetError::Invalid(e.to_string()))?);
    let asks = groups.iter().map(|g| ask(client, g, body.clone(), deadline));
    let replies = futures::future::join_all(asks).await;
    let mut out = FleetAnswer {
        operation: request.operation.clone(),
        groups: Vec::new(),
        missing_groups: Vec::new(),
        partial: false,
        repos_answered: 0,
        loading: Vec::new(),
        repos: Vec::new(),
        merged: Vec::new(),
        deadline_ms: deadline.as_millis() as u64,
        ms: 0,
    };
    for (group, ms, reply) in replies {
        out.take_reply(group, ms, reply)?;
    }
    out.repos.sort_by(|a, b| a.repo.cmp(&b.repo));
    out.loading.sort();
    out.repos_answered = out.repos.len();
    out.partial = !out.missing_groups.is_empty() || !out.loading.is_empty();
    if request.operation == "search" {
        let limit = request.args.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
        out.merged = merge_rankings(&out.repos, limit);
    }
    out.ms = t0.elapsed().as_millis() as u64;
    Ok(out)
}

/// One group's reply to `body`, with how long it took, or why there is none.
async fn ask(
    client: &async_nats::Client,
    group: &str,
    body: bytes::Bytes,
    deadline: Duration,
) -> (String, u64, Result<ShardReply, String>) {
    let t = Instant::now();
    let reply = tokio::time::timeout(deadline, client.request(format!("ken.query.{group}"), body)).await;
    let ms = t.elapsed().as_millis() as u64;
    let parsed = match reply {
        Err(_) => Err(format!(
            "no answer within the {} ms deadline",
            deadline.as_millis()
        )),
        Ok(Err(e)) => Err(match e.kind() {
            async_nats::RequestErrorKind::NoResponders => "no live replica".to_string(),
            _ => e.to_string(),
        }),
        Ok(Ok(m)) => {
            serde_json::from_slice::<ShardReply>(&m.payload).map_err(|e| format!("unreadable reply: {e}"))
        }
    };
    (group.to_string(), ms, parsed)
}

impl FleetAnswer {
    /// Adds `group`'s reply (or why it has none); a refused request refuses the whole query.
    fn take_reply(
        &mut self,
        group: String,
        ms: u64,
        reply: Result<ShardReply, String>,
    ) -> Result<(), FleetError> {
        match reply {
            Ok(r) if r.error.is_none() => {
                self.groups.push(GroupAnswer {
                    group: group.clone(),
                    replica: Some(r.replica),
                    repos: r.repos.len(),
                    ms,
                    error: None,
                });
                self.loading.extend(r.loading);
                self.repos.extend(r.repos);
            }
            Ok(r) => {
                // The request was refused: every group refuses it the same way.
                return Err(FleetError::Invalid(r.error.unwrap_or_default()));
            }
            Err(error) => {
                self.missing_groups.push(group.clone());
                self.groups.push(GroupAnswer {
                    group,
                    replica: None,
                    repos: 0,
                    ms,
                    error: Some(error),
                });
            }
        }
        Ok(())
    }
}

/// The ranked list of a search answer: files (file and hybrid modes), else definitions,
/// else chunks, else lines.
fn ranking(answer: &Value) -> &[Value] {
    for field in ["files", "hits", "chunks", "matches"] {
        if let Some(list) = answer.get(field).and_then(Value::as_array)
            && !list.is_empty()
        {
            return list;
        }
    }
    &[]
}

/// Reciprocal rank fusion of each repository's ranking: scores from different repositories'
/// statistics are not comparable, ranks are. Ties break by repository, path and line, so
/// the merge does not depend on which shard answered first.
pub(crate) fn merge_rankings(repos: &[RepoAnswer], limit: usize) -> Vec<MergedHit> {
    let mut merged: Vec<MergedHit> = Vec::new();
    for r in repos {
        let Some(answer) = &r.answer else { continue };
        for (i, item) in ranking(answer).iter().enumerate() {
            let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
            let line = item
                .get("line")
                .or_else(|| item.get("best").and_then(|b| b.get("line")))
                .or_else(|| item.get("start_line"))
                .and_then(Value::as_u64);
            merged.push(MergedHit {
                repo: r.repo.clone(),
                path: text("path").unwrap_or_default(),
                line,
                symbol: text("symbol").or_else(|| text("qualified_name")),
                rank: i + 1,
                score: 1.0 / (FLEET_RRF_K + (i + 1) as f64),
            });
        }
    }
    merged.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.repo.cmp(&b.repo))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
    });
    merged.truncate(limit);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(repo: &str, paths: &[&str]) -> RepoAnswer {
        let files: Vec<Value> = paths
            .iter()
            .map(|p| serde_json::json!({"path": p, "symbol": null}))
            .collect();
        RepoAnswer {
            repo: repo.to_string(),
            commit: "c".into(),
            group: "g".into(),
            answer: Some(serde_json::json!({"files": files, "hits": []})),
            error: None,
        }
    }

    #[test]
    fn rankings_interleave_by_rank_and_do_not_depend_on_arrival_order() {
        let a = answer("a", &["a1", "a2", "a3"]);
        let b = answer("b", &["b1"]);
        let one = merge_rankings(&[a.clone(), b.clone()], 10);
        let other = merge_rankings(&[b, a], 10);
        assert_eq!(one, other);
        let order: Vec<&str> = one.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(order, ["a1", "b1", "a2", "a3"]);
        assert_eq!(merge_rankings(&[answer("a", &["x", "y"])], 1).len(), 1);
    }
}
