#include "core/pipeline/pipeline_run.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

// Holds every step request until the test answers it.
class HeldRunner : public StepRunner {
 public:
  struct Call {
    std::string model;
    std::unique_ptr<InferRequest> request;
    InferCallbacks callbacks;
  };
  void Run(std::string_view model, std::optional<int64_t>, std::unique_ptr<InferRequest> request,
           InferCallbacks callbacks) override {
    calls.push_back({std::string(model), std::move(request), std::move(callbacks)});
  }
  // Answers the call to `model` with its input doubled as output "y", or with `status`.
  void Answer(const std::string& model, absl::Status status = absl::OkStatus()) {
    for (Call& call : calls) {
      if (call.model != model || !call.callbacks.done) continue;
      InferResponse response;
      response.status = status;
      if (status.ok()) {
        const Tensor& in = call.request->inputs.at(0).tensor;
        Tensor out = Tensor::Allocate(DataType::kFp32, in.shape()).value();
        for (int64_t i = 0; i < in.element_count(); ++i) {
          out.mutable_data_as<float>()[i] = 2 * in.data_as<float>()[i];
        }
        response.outputs.push_back({"y", std::move(out)});
      }
      auto done = std::move(call.callbacks.done);
      call.callbacks.done = nullptr;
      done(nullptr, std::move(response));
      return;
    }
    ADD_FAILURE() << "no pending call to " << model;
  }
  std::vector<Call> calls;
};

// l + r, element-wise.
class AddOp : public PipelineOp {
 public:
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<TensorSpec>& outputs() const override { return outputs_; }
  bool heavy() const override { return false; }
  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> in) const override {
    Tensor out = Tensor::Allocate(DataType::kFp32, in[0].shape()).value();
    for (int64_t i = 0; i < out.element_count(); ++i) {
      out.mutable_data_as<float>()[i] = in[0].data_as<float>()[i] + in[1].data_as<float>()[i];
    }
    return std::vector<Tensor>{std::move(out)};
  }

 private:
  std::vector<TensorSpec> inputs_{{"l", DataType::kFp32, {-1}}, {"r", DataType::kFp32, {-1}}};
  std::vector<TensorSpec> outputs_{{"s", DataType::kFp32, {-1}}};
};

// x -> m1 -> a ┐
// x -> m2 -> b ┴-> add -> s
std::shared_ptr<const CompiledPipeline> Diamond() {
  auto pipeline = std::make_shared<CompiledPipeline>();
  pipeline->name = "p";
  pipeline->slot_count = 4;
  pipeline->input_slots = {0};
  pipeline->output_slots = {3};
  for (const char* model : {"m1", "m2"}) {
    CompiledStep step;
    step.name = std::string("run_") + model;
    step.model = model;
    step.input_ports = {"a"};
    step.input_slots = {0};
    step.output_ports = {"y"};
    step.output_slots = {pipeline->steps.size() + 1};
    step.consumers = {2};
    pipeline->steps.push_back(std::move(step));
  }
  pipeline->ops.push_back(std::make_unique<AddOp>());
  CompiledStep add;
  add.name = "add";
  add.op = pipeline->ops.back().get();
  add.input_ports = {"l", "r"};
  add.input_slots = {1, 2};
  add.output_ports = {"s"};
  add.output_slots = {3};
  add.op_output_index = {0};
  add.dependencies = 2;
  pipeline->steps.push_back(std::move(add));
  return pipeline;
}

AsyncExecution Input(std::vector<float> values) {
  AsyncExecution execution;
  execution.id = "req";
  Tensor x = Tensor::Allocate(DataType::kFp32, {1, static_cast<int64_t>(values.size())}).value();
  for (size_t i = 0; i < values.size(); ++i) x.mutable_data_as<float>()[i] = values[i];
  execution.inputs.push_back(std::move(x));
  return execution;
}

struct Outcome {
  int calls = 0;
  absl::StatusOr<std::vector<Tensor>> result = absl::UnknownError("not answered");
};

AsyncDone Record(Outcome* outcome) {
  return [outcome](absl::StatusOr<std::vector<Tensor>> result) {
    ++outcome->calls;
    outcome->result = std::move(result);
  };
}

TEST(PipelineRunTest, SubmitsIndependentModelStepsTogetherAndJoinsTheirOutputs) {
  HeldRunner runner;
  Outcome outcome;
  StartPipelineRun(Diamond(), &runner, Input({1, 2}), Record(&outcome));
  // Both model steps are in flight before either answers.
  ASSERT_EQ(runner.calls.size(), 2u);
  EXPECT_EQ(runner.calls[0].request->id, "req/run_m1");
  EXPECT_EQ(runner.calls[1].request->requested_outputs, std::vector<std::string>{"y"});
  runner.Answer("m2");
  EXPECT_EQ(outcome.calls, 0);
  runner.Answer("m1");
  ASSERT_EQ(outcome.calls, 1);
  ASSERT_TRUE(outcome.result.ok()) << outcome.result.status();
  const Tensor& s = outcome.result->at(0);
  EXPECT_EQ(s.shape(), (Shape{1, 2}));
  EXPECT_EQ(s.data_as<float>()[0], 4.0f);  // 2x + 2x
  EXPECT_EQ(s.data_as<float>()[1], 8.0f);
}

TEST(PipelineRunTest, FirstErrorWinsAndLaterCompletionsAreDropped) {
  HeldRunner runner;
  Outcome outcome;
  StartPipelineRun(Diamond(), &runner, Input({1}), Record(&outcome));
  runner.Answer("m2", absl::UnavailableError("m2 is loading"));
  runner.Answer("m1");
  ASSERT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome.result.status().message(),
              HasSubstr("pipeline 'p' step 'run_m2' (model m2): m2 is loading"));
}

TEST(PipelineRunTest, AStepModelRefusingItsInputsIsTheServersFault) {
  HeldRunner runner;
  Outcome outcome;
  StartPipelineRun(Diamond(), &runner, Input({1}), Record(&outcome));
  runner.Answer("m1", absl::InvalidArgumentError("input 'a': wrong shape"));
  ASSERT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outcome.result.status().message(),
              HasSubstr("step 'run_m1' (model m1) refused its inputs: input 'a'"));
  runner.Answer("m2");
  EXPECT_EQ(outcome.calls, 1);
}

TEST(PipelineRunTest, PassesDeadlinePriorityTenantAndCancellationDown) {
  HeldRunner runner;
  Outcome outcome;
  AsyncExecution execution = Input({1});
  execution.deadline = Clock::now() + std::chrono::seconds(5);
  execution.priority = 2;
  execution.tenant = "acme";
  execution.cancelled = std::make_shared<std::atomic<bool>>(false);
  const auto cancelled = execution.cancelled;
  StartPipelineRun(Diamond(), &runner, std::move(execution), Record(&outcome));
  ASSERT_EQ(runner.calls.size(), 2u);
  const InferRequest& request = *runner.calls[0].request;
  EXPECT_GT(request.timeout_us, 4'000'000);
  EXPECT_LE(request.timeout_us, 5'000'000);
  EXPECT_EQ(request.priority, 2);
  EXPECT_EQ(request.tenant, "acme");
  EXPECT_EQ(request.cancelled, cancelled);
}

TEST(PipelineRunTest, APassedDeadlineFailsBeforeSubmitting) {
  HeldRunner runner;
  Outcome outcome;
  AsyncExecution execution = Input({1});
  execution.deadline = Clock::now() - std::chrono::milliseconds(1);
  StartPipelineRun(Diamond(), &runner, std::move(execution), Record(&outcome));
  EXPECT_TRUE(runner.calls.empty());
  ASSERT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.result.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(PipelineRunTest, BatchDimViewsShareTheBytes) {
  Tensor x = Tensor::Allocate(DataType::kFp32, {3}).value();
  const Tensor batched = WithBatchDim(x);
  EXPECT_EQ(batched.shape(), (Shape{1, 3}));
  EXPECT_EQ(batched.data(), x.data());
  const Tensor back = WithoutBatchDim(batched);
  EXPECT_EQ(back.shape(), (Shape{3}));
  EXPECT_EQ(back.data(), x.data());
}

}  // namespace
}  // namespace inferd
