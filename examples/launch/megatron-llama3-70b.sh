#!/bin/bash
# Llama 3 70B pre-training with Megatron-LM (megatron-core, Transformer Engine) on 8 nodes of
# 8 × H100 SXM 80 GB. Shape from meta-llama/Meta-Llama-3-70B config.json.
#SBATCH --job-name=llama3-70b
#SBATCH --nodes=8
#SBATCH --gpus-per-node=8
#SBATCH --time=04:00:00
#
# fmperf: system=nvidia_h100_sxm5_80gb

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NUM_NODES=${SLURM_NNODES:-8}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=6000

CHECKPOINT_PATH=/lustre/ckpt/llama3-70b
TENSORBOARD_LOGS_PATH=/lustre/logs/llama3-70b
DATA_PATH=/lustre/data/dclm_text_document
TOKENIZER=meta-llama/Meta-Llama-3-70B

TP=8
PP=4
CP=1
MBS=1
GBS=128

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)

MODEL_ARGS=(
    --use-mcore-models
    --transformer-impl transformer_engine
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
    --position-embedding-type rope
    --rotary-base 500000
    --normalization RMSNorm
    --swiglu
    --disable-bias-linear
    --untie-embeddings-and-output-weights
    --attention-dropout 0.0
    --hidden-dropout 0.0
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 500000
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --init-method-std 0.008
    --clip-grad 1.0
    --bf16
    --lr 1.5e-4
    --lr-decay-style cosine
    --min-lr 1.5e-5
    --lr-warmup-iters 2000
    --recompute-activations
    --use-flash-attn
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --context-parallel-size $CP
    --num-layers-per-virtual-pipeline-stage 5
    --sequence-parallel
)

DATA_ARGS=(
    --data-path $DATA_PATH
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model $TOKENIZER
    --split 99,1,0
)

EVAL_AND_LOGGING_ARGS=(
    --log-interval 10
    --save-interval 1000
    --eval-interval 1000
    --save $CHECKPOINT_PATH
    --load $CHECKPOINT_PATH
    --eval-iters 10
    --tensorboard-dir $TENSORBOARD_LOGS_PATH
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${EVAL_AND_LOGGING_ARGS[@]}
