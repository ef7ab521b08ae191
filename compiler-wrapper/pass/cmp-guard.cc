// lafuzz: comparison hooks called only while a tracing run is on.
//
// SanitizerCoverage's trace-cmp calls a hook before every integer comparison and switch; outside
// tracing runs the hook returns at once, but the call itself (and the registers it clobbers in
// hot loops) halved the speed of comparison-heavy targets. This pass runs after
// SanitizerCoverage and tests the runtime's hooks flag (`lafuzz_comparison_hooks_on`, one byte,
// set for tracing runs, and for every run with value profile on; never changed while the
// target's code runs) in one of two ways:
// - a function with several hooks is split in two: a copy with the hooks, and the original
//   without them, which tests the flag once on entry and, in tracing runs, jumps to the copy.
//   The common path then runs the code as compiled without comparison logging (same coverage
//   counters), behind one load and a branch never taken.
// - a function with few hooks (or one that cannot be copied) keeps each hook behind an inline
//   test of the flag, in a cold block: a load and a branch that is never taken.
// Switch hooks call the runtimes' lafuzz_trace_switch instead of SanitizerCoverage's (see
// compiler-wrapper/runtime/cmplog_log.h): a switch in a loop stops logging once it has logged
// enough.
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

// The byte both runtimes (in-process: src/target/hooks.c; standalone: runtime/cmplog.c) set to 1
// for the duration of a tracing run, and the in-process one for every run with value profile
// on (its hooks then record comparison distances, see src/target/comparison_hooks.rs).
constexpr const char *TRACING_FLAG = "lafuzz_comparison_hooks_on";

// SanitizerCoverage's switch hook, and ours that replaces it (same arguments).
constexpr const char *SANCOV_SWITCH_HOOK = "__sanitizer_cov_trace_switch";
constexpr const char *SWITCH_HOOK = "lafuzz_trace_switch";

// Functions with at least this many hooks are split (see above). Splitting all of them measured
// the same; fewer splits keep the code smaller.
constexpr unsigned SPLIT_FROM = 4;

bool isComparisonHook(const Function *callee) {
  if (!callee) return false;
  StringRef name = callee->getName();
  return name.starts_with("__sanitizer_cov_trace_cmp") ||
         name.starts_with("__sanitizer_cov_trace_const_cmp") ||
         name == SANCOV_SWITCH_HOOK;
}

// What a plain copy and a forwarding tail call cannot carry over.
bool canSplit(Function &F) {
  if (F.isVarArg() || F.hasFnAttribute(Attribute::Naked)) return false;
  for (Argument &arg : F.args())
    if (arg.hasInAllocaAttr() || arg.hasPreallocatedAttr() || arg.hasSwiftErrorAttr() ||
        arg.hasAttribute(Attribute::SwiftSelf) || arg.hasAttribute(Attribute::SwiftAsync))
      return false;
  for (BasicBlock &BB : F) {
    if (BB.hasAddressTaken()) return false;
    for (Instruction &I : BB)
      if (auto *call = dyn_cast<CallInst>(&I))
        if (call->isMustTailCall()) return false;
  }
  return true;
}

struct GuardComparisonHooks : PassInfoMixin<GuardComparisonHooks> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    MapVector<Function *, SmallVector<CallInst *, 8>> hooksOf;
    for (Function &F : M)
      for (BasicBlock &BB : F)
        for (Instruction &I : BB)
          if (auto *call = dyn_cast<CallInst>(&I))
            if (isComparisonHook(call->getCalledFunction())) hooksOf[&F].push_back(call);
    if (hooksOf.empty()) return PreservedAnalyses::all();

    Constant *flag = M.getOrInsertGlobal(TRACING_FLAG, Type::getInt8Ty(M.getContext()));
    for (auto &[F, hooks] : hooksOf)
      for (CallInst *hook : hooks)
        if (hook->getCalledFunction()->getName() == SANCOV_SWITCH_HOOK)
          hook->setCalledFunction(
              M.getOrInsertFunction(SWITCH_HOOK, hook->getCalledFunction()->getFunctionType()));
    for (auto &[F, hooks] : hooksOf) {
      if (hooks.size() >= SPLIT_FROM && canSplit(*F))
        split(*F, hooks, flag);
      else
        for (CallInst *hook : hooks) guard(hook, flag);
    }
    return PreservedAnalyses::none();
  }

  static LoadInst *loadFlag(IRBuilder<> &irb, Constant *flag) {
    LoadInst *tracing = irb.CreateLoad(irb.getInt8Ty(), flag);
    tracing->setMetadata(LLVMContext::MD_nosanitize, MDNode::get(irb.getContext(), {}));
    return tracing;
  }

  static MDNode *rarely(LLVMContext &C) { return MDBuilder(C).createBranchWeights(1, 1 << 20); }

  static void guard(CallInst *hook, Constant *flag) {
    IRBuilder<> irb(hook);
    LoadInst *tracing = loadFlag(irb, flag);
    Instruction *cold = SplitBlockAndInsertIfThen(irb.CreateIsNotNull(tracing), hook, false,
                                                  rarely(hook->getContext()));
    // The operands' widening casts only feed the hook: they go to the cold block with it.
    BasicBlock *head = tracing->getParent();
    for (Value *arg : hook->args())
      if (auto *cast = dyn_cast<CastInst>(arg))
        if (cast->hasOneUse() && cast->getParent() == head) cast->moveBefore(cold);
    hook->moveBefore(cold);
  }

  static void split(Function &F, ArrayRef<CallInst *> hooks, Constant *flag) {
    // The copy keeps the hooks, F loses them: the common path runs under F's own name (in
    // profiles and stack traces) and pays only the flag test. With the roles the other way
    // round, F's prologue (its callee-saved registers and frame, for a body it did not run)
    // came before the test and was undone for the jump: on sqlite's small hot functions, 14
    // stack operations per call.
    ValueToValueMapTy vmap;
    Function *traced = CloneFunction(&F, vmap);
    traced->setName(F.getName() + ".lafuzz_traced");
    traced->setLinkage(GlobalValue::InternalLinkage);
    traced->setVisibility(GlobalValue::DefaultVisibility);
    traced->setDLLStorageClass(GlobalValue::DefaultStorageClass);
    // The coverage counters it shares live in F's comdat: discarded with it, never without.
    traced->setComdat(F.getComdat());
    for (CallInst *hook : hooks) {
      SmallVector<WeakTrackingVH, 4> operands(hook->arg_begin(), hook->arg_end());
      hook->eraseFromParent();
      RecursivelyDeleteTriviallyDeadInstructionsPermissive(operands);
    }

    // F: a new entry block holding F's static allocas (they must stay in the entry block),
    // then the flag test; in tracing runs a tail call to the copy.
    LLVMContext &C = F.getContext();
    BasicBlock *body = &F.getEntryBlock();
    SmallVector<AllocaInst *, 8> allocas;
    for (Instruction &I : *body)
      if (auto *alloca = dyn_cast<AllocaInst>(&I))
        if (alloca->isStaticAlloca()) allocas.push_back(alloca);
    BasicBlock *entry = BasicBlock::Create(C, "lafuzz.entry", &F, body);
    BasicBlock *toTraced = BasicBlock::Create(C, "lafuzz.traced", &F, body);
    IRBuilder<> irb(entry);
    for (AllocaInst *alloca : allocas) alloca->moveBefore(*entry, entry->end());
    LoadInst *tracing = loadFlag(irb, flag);
    irb.CreateCondBr(irb.CreateIsNotNull(tracing), toTraced, body, rarely(C));
    irb.SetInsertPoint(toTraced);
    SmallVector<Value *, 8> args;
    for (Argument &arg : F.args()) args.push_back(&arg);
    CallInst *call = irb.CreateCall(traced, args);
    call->setCallingConv(F.getCallingConv());
    // Only what the arguments and the result carry (musttail wants them equal).
    AttributeList attrs = F.getAttributes();
    SmallVector<AttributeSet, 8> params;
    for (unsigned i = 0; i < F.arg_size(); i++) params.push_back(attrs.getParamAttrs(i));
    call->setAttributes(AttributeList::get(C, AttributeSet(), attrs.getRetAttrs(), params));
    call->setTailCallKind(CallInst::TCK_MustTail);
    if (F.getReturnType()->isVoidTy())
      irb.CreateRetVoid();
    else
      irb.CreateRet(call);
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "lafuzz-cmp-guard", "1", [](PassBuilder &PB) {
            // SanitizerCoverage is added by clang's own optimizer-last callback, which clang
            // registers after the plugins' callbacks. Registering ours when the pipeline is
            // built (all callbacks are in by then) puts it after SanitizerCoverage.
            PB.registerPipelineStartEPCallback([&PB](ModulePassManager &, OptimizationLevel) {
              static bool registered = false;
              if (registered) return;
              registered = true;
              PB.registerOptimizerLastEPCallback(
                  [](ModulePassManager &MPM, OptimizationLevel) {
                    MPM.addPass(GuardComparisonHooks());
                  });
            });
          }};
}
