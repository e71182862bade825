#!/bin/bash
# Llama 3 70B on 64 nodes of 8 × H100 SXM 80 GB (512 GPUs): DP 64, TP 4, PP 2, micro-batch 1, the
# distributed optimizer, no recomputation. Issue 29's layout: Megatron's unsharded FP32
# main-gradient buffer (35.3 GB per device) makes it "does not fit" (fmperf estimate --from).
torchrun --nproc_per_node 8 --nnodes 64 pretrain_gpt.py \
  --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
  --ffn-hidden-size 28672 --swiglu --seq-length 8192 --max-position-embeddings 8192 \
  --vocab-size 128256 --untie-embeddings-and-output-weights \
  --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --sequence-parallel \
  --micro-batch-size 1 --global-batch-size 1024 --bf16 --use-distributed-optimizer
