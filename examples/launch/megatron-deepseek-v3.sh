#!/bin/bash
# DeepSeek-V3 (671B, 37B active) pre-training with Megatron-LM (megatron-core, Transformer Engine)
# on 128 nodes of 8 × H100 SXM 80 GB. Shape from deepseek-ai/DeepSeek-V3 config.json
# (hidden_size 7168, num_hidden_layers 61, intermediate_size 18432, moe_intermediate_size 2048,
# n_routed_experts 256, n_shared_experts 1, num_experts_per_tok 8, first_k_dense_replace 3,
# q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
# num_nextn_predict_layers 1, scoring_func sigmoid, vocab_size 129280); flags as in Megatron-LM's
# DeepSeek-V3 examples (examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-V3.sh style).
#SBATCH --job-name=deepseek-v3
#SBATCH --nodes=128
#SBATCH --gpus-per-node=8
#
# fmperf: system=nvidia_h100_sxm5_80gb

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NUM_NODES=${SLURM_NNODES:-128}
DATA_PATH=/lustre/data/dclm_text_document
CHECKPOINT_PATH=/lustre/ckpt/deepseek-v3

TP=2
PP=16
EP=64
MBS=1
GBS=4096

MODEL_ARGS=(
    --use-mcore-models
    --num-layers 61
    --hidden-size 7168
    --ffn-hidden-size 18432
    --num-attention-heads 128
    --seq-length 4096
    --max-position-embeddings 4096
    --position-embedding-type rope
    --normalization RMSNorm
    --swiglu
    --disable-bias-linear
    --untie-embeddings-and-output-weights
    --vocab-size 129280
    --multi-latent-attention
    --q-lora-rank 1536
    --kv-lora-rank 512
    --qk-head-dim 128
    --qk-pos-emb-head-dim 64
    --v-head-dim 128
    --mtp-num-layers 1
    --mtp-loss-scaling-factor 0.1
)

MOE_ARGS=(
    --num-experts 256
    --moe-layer-freq "([0]*3+[1]*58)"
    --moe-ffn-hidden-size 2048
    --moe-shared-expert-intermediate-size 2048
    --moe-router-topk 8
    --moe-router-score-function sigmoid
    --moe-router-enable-expert-bias
    --moe-router-topk-scaling-factor 2.5
    --moe-router-num-groups 8
    --moe-router-group-topk 4
    --moe-router-load-balancing-type seq_aux_loss
    --moe-aux-loss-coeff 1e-4
    --moe-token-dispatcher-type alltoall
    --moe-grouped-gemm
    --moe-permute-fusion
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 500000
    --bf16
    --lr 2.2e-4
    --min-lr 2.2e-5
    --lr-decay-style cosine
    --clip-grad 1.0
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --recompute-granularity full
    --recompute-method uniform
    --recompute-num-layers 1
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --expert-model-parallel-size $EP
    --expert-tensor-parallel-size 1
    --sequence-parallel
)

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${MOE_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --data-path $DATA_PATH \
    --save $CHECKPOINT_PATH \
    --log-interval 10
