// A loaded pipeline version's graph, ready to run: scope names resolved to slot indices,
// each step's input and output slots, who consumes whom, and the instantiated ops. Built
// once at load (backends/pipeline/pipeline_model.cc) and shared, immutable, by every
// request (PipelineRun).
#ifndef INFERD_CORE_PIPELINE_COMPILED_PIPELINE_H_
#define INFERD_CORE_PIPELINE_COMPILED_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pipeline/pipeline_op.h"

namespace inferd {

struct CompiledStep {
  std::string name;
  size_t spec_index = 0;  // steps[i] in config.yaml, for errors
  // An op step: `op` set (owned by CompiledPipeline::ops). A model step: `model` set.
  const PipelineOp* op = nullptr;
  std::string model;
  std::optional<int64_t> version;
  // A model step whose model has no batch dimension: the pipeline's [1, ...] tensors lose
  // their leading 1 on the way in and get it back on the way out.
  bool model_unbatched = false;
  bool heavy = false;
  // Op steps: in the op's port order. Model steps: the model's input names as mapped.
  std::vector<std::string> input_ports;
  std::vector<size_t> input_slots;
  // The mapped outputs only (a model step asks for these alone: requested_outputs).
  std::vector<std::string> output_ports;
  std::vector<size_t> output_slots;
  // Op steps: for output_ports[i], its index in the op's outputs().
  std::vector<size_t> op_output_index;
  // Steps reading any of this step's outputs (each once), and how many distinct steps this
  // one reads from.
  std::vector<size_t> consumers;
  size_t dependencies = 0;
};

struct CompiledPipeline {
  std::string name;  // the pipeline model's name, for errors
  // False: the pipeline has no batch dimension; its inputs get a leading 1 so that ops always
  // see [B, ...], and its outputs lose it.
  bool batched = true;
  size_t slot_count = 0;
  std::vector<size_t> input_slots;   // config inputs, in order
  std::vector<size_t> output_slots;  // config outputs, in order
  std::vector<CompiledStep> steps;   // in an order where producers come first
  std::vector<std::unique_ptr<PipelineOp>> ops;
};

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_COMPILED_PIPELINE_H_
