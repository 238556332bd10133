"""tensorfs.transformers: a transformers model whose weights are tensorfs tensors.

    from tensorfs.transformers import from_pretrained
    model = from_pretrained("/mnt/tensors/llama", source="/models/Llama-3.2-1B")

The first process that finds no /mnt/tensors/llama loads the model directory into it
(`tensorctl load` semantics: every shard into one directory of tensors named by their
keys, config and tokenizer files beside them); every later one, and every one that waited
while the first loaded, attaches: the model is built around views of the tensors' memory,
no copy. torch and transformers are imported on the first call.
"""
import contextlib
import os
import warnings
from typing import Any, Optional

from . import _modeldir
from . import tensor as _tensor
from . import torch as _tt


@contextlib.contextmanager
def _parameters_on_meta(torch):
    """Modules built inside get their parameters on the meta device (no memory, no
    initialisation work) and their buffers on the current device, computed by the
    modules' own code (rotary inv_freq, position ids...)."""
    nn = torch.nn
    old = nn.Module.register_parameter

    def register(module, name, param):
        old(module, name, param)
        p = module._parameters.get(name)
        if p is not None and not p.is_meta:
            kw = dict(p.__dict__)
            kw["requires_grad"] = p.requires_grad
            module._parameters[name] = type(p)(p.to("meta"), **kw)

    nn.Module.register_parameter = register
    try:
        yield
    finally:
        nn.Module.register_parameter = old


def _default_class(transformers, config):
    archs = getattr(config, "architectures", None) or []
    for a in archs:
        cls = getattr(transformers, a, None) if isinstance(a, str) else None
        if isinstance(cls, type):
            return cls
    if any(isinstance(a, str) and a.endswith("ForCausalLM") for a in archs):
        return transformers.AutoModelForCausalLM
    return transformers.AutoModel


def _build(transformers, model_cls, config, kw):
    if isinstance(model_cls, type) and issubclass(model_cls, transformers.PreTrainedModel):
        return model_cls._from_config(config, **kw)
    return model_cls.from_config(config, **kw)


def _remake_meta_buffers(torch, model, config, device) -> None:
    """Buffers that are still on the meta device (a module that made them from a
    parameter): rotary embeddings are made again on device as their class makes them."""
    for name, m in list(model.named_modules()):
        inv = m._buffers.get("inv_freq") if hasattr(m, "_buffers") else None
        if inv is None or not inv.is_meta:
            continue
        new = type(m)(config=getattr(m, "config", config), device=device)
        parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
        setattr(parent, name.rpartition(".")[2], new)
    left = [n for n, b in model.named_buffers() if b.is_meta]
    if left:
        raise RuntimeError("tensorfs.transformers: buffers with no value after the load: %s"
                           % ", ".join(left))


def from_pretrained(path: Any, model_cls: Any = None, source: Optional[str] = None,
                    **kw: Any) -> Any:
    """The transformers model stored at path (a directory of tensors named by their
    state-dict keys, with config.json beside them as `tensorctl load` of a model directory
    makes it), its weights views of the tensors' memory: no copy, on the tensors' device.

    model_cls: the class (AutoModelForCausalLM, LlamaForCausalLM...); default: the
    config's architecture, else AutoModelForCausalLM for a *ForCausalLM, else AutoModel.
    source: a Hugging Face model directory loaded into path first when path does not
    exist (of processes racing, one loads and the others wait; see _modeldir). kw go to
    the model's construction (attn_implementation="eager"...).

    The skeleton's parameters are made on the meta device and replaced by the views
    (load_state_dict(assign=True)); buffers outside the state dict (rotary inv_freq,
    position ids) are made by the modules' own code, on the CPU as from_pretrained makes
    them, then moved to the weights' device; tied weights are tied; the model is in eval
    mode, with the stored generation_config.json when there is one. A parameter missing
    from path raises RuntimeError; keys the model does not have are ignored with a
    warning."""
    p = _tensor._fspath(path)
    if source is not None:
        _modeldir.ensure_loaded(os.fspath(source), p)
    import torch
    import transformers
    config = transformers.AutoConfig.from_pretrained(p)
    if model_cls is None:
        model_cls = _default_class(transformers, config)
    sd = _tt.state_dict(p)
    if not sd:
        raise RuntimeError("%s holds no tensors" % p)
    device = next(iter(sd.values())).device
    with _parameters_on_meta(torch), torch.device("cpu"):
        model = _build(transformers, model_cls, config, kw)
    for m in model.modules():
        for n, b in list(m._buffers.items()):
            if b is not None and not b.is_meta and b.device != device:
                m._buffers[n] = b.to(device)
    result = model.load_state_dict(sd, strict=False, assign=True)
    del sd
    try:
        # transformers 5: ties symmetrically, to whichever of a tied pair path holds
        model.tie_weights(missing_keys=set(result.missing_keys))
    except TypeError:
        model.tie_weights()
    _remake_meta_buffers(torch, model, config, device)
    missing = [n for n, q in model.named_parameters() if q.is_meta]
    if missing:
        raise RuntimeError("%s has no tensor for the parameters %s" % (p, ", ".join(missing)))
    if result.unexpected_keys:
        warnings.warn("%s: tensors that %s does not use: %s"
                      % (p, type(model).__name__, ", ".join(result.unexpected_keys)))
    gen = os.path.join(p, "generation_config.json")
    if os.path.exists(gen) and getattr(model, "can_generate", lambda: False)():
        try:
            model.generation_config = transformers.GenerationConfig.from_pretrained(p)
        except (OSError, ValueError) as e:
            warnings.warn("%s: %s" % (gen, e))
    model.eval()
    return model


__all__ = ["from_pretrained"]
