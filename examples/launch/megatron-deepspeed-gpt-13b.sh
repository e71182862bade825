#!/bin/bash
# A Megatron-DeepSpeed pre-training launch in the shape of Microsoft's examples_deepspeed scripts
# (written for fmperf's examples): 4 nodes × 8 GPUs, the batch and ZeRO stage in the DeepSpeed JSON
# beside it (ds_config_gpt_13b.json). Read both together:
#   fmperf estimate --from megatron-deepspeed-gpt-13b.sh --from ds_config_gpt_13b.json --system nvidia_a100_sxm4_80gb
NNODES=${NNODES:-4}
GPUS_PER_NODE=8
TP=2
PP=4
DS_CONFIG=ds_config_gpt_13b.json

MODEL_ARGS=(
    --num-layers 40
    --hidden-size 5120
    --num-attention-heads 40
    --seq-length 2048
    --max-position-embeddings 2048
    # GPT-2 BPE: the vocabulary comes from the tokenizer
    --tokenizer-type GPT2BPETokenizer
    --vocab-file gpt2-vocab.json
    --merge-file gpt2-merges.txt
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
)

deepspeed --num_nodes $NNODES --num_gpus $GPUS_PER_NODE pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    "${PARALLEL_ARGS[@]}" \
    --bf16 \
    --checkpoint-activations \
    --train-iters 100000 \
    --lr 1.0e-4 \
    --data-path /data/pile_text_document \
    --deepspeed \
    --deepspeed_config $DS_CONFIG
