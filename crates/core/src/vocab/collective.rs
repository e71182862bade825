//! The collective operations both models price (spec §2.4): their kinds and the reference's names.
//! The reference's two-tier ring model of their time is [`crate::reference::collective`].

/// The collective operations both models price, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CollectiveKind {
    /// Sum over the group, result everywhere.
    AllReduce,
    /// Concatenate the shards, result everywhere.
    AllGather,
    /// Sum over the group, result sharded.
    ReduceScatter,
    /// One member's tensor to every member.
    Broadcast,
    /// Sum over the group to one member.
    Reduce,
    /// Point-to-point send between two pipeline stages.
    P2p,
}

impl CollectiveKind {
    /// The reference's name (`allreduce`, `allgather`, `reducescatter`, `broadcast`, `reduce`, `p2p`).
    pub fn as_str(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "allreduce",
            CollectiveKind::AllGather => "allgather",
            CollectiveKind::ReduceScatter => "reducescatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::P2p => "p2p",
        }
    }
}
