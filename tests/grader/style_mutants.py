"""Planted bugs in correct code of other styles (public/: public projects' code, each file naming its
source; variants/): the correct file with a few lines changed, each changed line marked `# BUG`,
written out for grading. They hold issue 34's op families to the styles real code is written in
(rotate_half, Meta's complex numbers, FlashAttention-2's unflatten, vLLM's host-side lengths, a
gather with index_select), where a family must quote the planted line or none."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent


@dataclass(frozen=True)
class StyleMutant:
    stem: str
    source: str  # a passing file of public/ or variants/
    check: str
    diagnosis: str
    edits: tuple[tuple[str, str], ...]  # (a line of the source, what it becomes)

    def text(self) -> str:
        text = (HERE / f"{self.source}.py").read_text()
        assert "# expect: pass\n" in text, self.source
        text = text.replace("# expect: pass\n", f"# expect: check={self.check} diagnosis={self.diagnosis}\n")
        for line, changed in self.edits:
            assert text.count(line + "\n") == 1, (self.source, line)
            text = text.replace(line + "\n", f"{changed}  # BUG\n")
        return text


STYLE_MUTANTS = (
    # the sign flipped inside rotate_half: found by its values, the first half negated
    StyleMutant("rope_rotate_half_reversed", "public/rope_hf_llama_rotate_half_pass", "half", "rope-rotation-reversed",
                (("    return torch.cat((-x2, x1), dim=-1)", "    return torch.cat((x2, -x1), dim=-1)"),)),
    # sin and cos traded where they are used: the tables' own line is not the mistake, nor are their names
    StyleMutant("rope_rotate_half_sin_cos_swapped", "public/rope_hf_llama_rotate_half_pass", "half",
                "rope-sin-cos-swapped",
                (("    return (q * cos) + (rotate_half(q) * sin)", "    return (q * sin) + (rotate_half(q) * cos)"),)),
    # the sines negated where the helper returns them: the caller's `sin` holds them negated, so the line that
    # uses them (correctly named) is no evidence, and no line is quoted
    StyleMutant("rope_rotate_half_sin_negated_in_helper", "public/rope_hf_llama_rotate_half_pass", "half",
                "rope-rotation-reversed",
                (("    return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)",
                  "    return emb.cos().to(dtype=x.dtype), (-emb).sin().to(dtype=x.dtype)"),)),
    # the tables passed in each other's place: the helper's `cos` holds the sines, made on no line of its own
    StyleMutant("rope_rotate_half_tables_swapped_at_call", "public/rope_hf_llama_rotate_half_pass", "half",
                "rope-sin-cos-swapped",
                (("    x_rot = apply_rotary_pos_emb(x_rot, cos, sin)",
                  "    x_rot = apply_rotary_pos_emb(x_rot, sin, cos)"),)),
    # Meta's complex table turned the other way: the product's line reads a complex table, which vouches for
    # nothing
    StyleMutant("rope_complex_angles_negated", "public/rope_meta_llama_complex_pass", "half", "rope-rotation-reversed",
                (("    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64",
                  "    freqs_cis = torch.polar(torch.ones_like(freqs), -freqs)  # complex64"),)),
    # GPT-NeoX's rotation turned the other way on its own line: quoted, its tables gathered under their names
    StyleMutant("rope_neox_formula_reversed", "public/rope_neox_rotary_ndims_pass", "half", "rope-rotation-reversed",
                (("    return (q * cos) + (rotate_half(q) * sin)", "    return (q * cos) - (rotate_half(q) * sin)"),)),
    # the positions negated where the table is built: every line after computes from tables named correctly
    StyleMutant("rope_neox_angles_negated", "public/rope_neox_rotary_ndims_pass", "half", "rope-rotation-reversed",
                (("        freqs = torch.einsum(\"i,j->ij\", t, self.inv_freq)",
                  "        freqs = torch.einsum(\"i,j->ij\", -t, self.inv_freq)"),)),
    # GPT-J's halves split under each other's names: split makes no tensor its line can be told by, so no line
    StyleMutant("rope_gptj_split_swapped", "public/rope_gptj_rotate_every_two_pass", "half", "rope-sin-cos-swapped",
                (("    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)",
                  "    cos, sin = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)"),)),
    # positions from 0 passed to a correct helper: the helper's tables are not the mistake, the arange is
    StyleMutant("rope_rotate_half_positions_from_zero", "public/rope_hf_llama_rotate_half_pass", "decode",
                "rope-offset-ignored",
                (("    cos, sin = rotary_cos_sin(x, positions[None, :], rotary_dim, base)",
                  "    cos, sin = rotary_cos_sin(x, torch.arange(x.shape[-2], device=x.device)[None, :], rotary_dim, "
                  "base)"),)),
    # GPT-J's table sliced from row 0: its sin and cos are split from it a line below
    StyleMutant("rope_every_two_table_from_zero", "public/rope_gptj_rotate_every_two_pass", "decode",
                "rope-offset-ignored",
                (("    sincos = embed_positions[positions[None, :].expand(x.shape[0], -1)]",
                  "    sincos = embed_positions[: x.shape[-2]][None].expand(x.shape[0], -1, -1)"),)),
    # the exponent counts pairs, in a file whose first arange permutes the features
    StyleMutant("rope_rotate_half_frequency_exponent", "public/rope_hf_llama_rotate_half_pass", "half",
                "rope-frequency-exponent",
                (("    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=x.device, "
                  "dtype=torch.float) / dim))",
                  "    inv_freq = 1.0 / (base ** (torch.arange(0, dim // 2, dtype=torch.int64).to(device=x.device, "
                  "dtype=torch.float) / dim))"),)),
    StyleMutant("rope_complex_positions_low_precision", "public/rope_meta_llama_complex_pass", "long-context",
                "rope-angles-low-precision",
                (("def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):",
                  "def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0, dtype=torch.float32):"),
                 ("    t = torch.arange(end, device=freqs.device)  # type: ignore",
                  "    t = torch.arange(end, device=freqs.device, dtype=dtype)"),
                 ("    freqs = torch.outer(t, freqs).float()  # type: ignore",
                  "    freqs = torch.outer(t, freqs.to(dtype)).float()"),
                 ("    freqs_cis = precompute_freqs_cis(rotary_dim, int(positions.max()) + 1, base).to(x.device)"
                  "[positions]",
                  "    freqs_cis = precompute_freqs_cis(rotary_dim, int(positions.max()) + 1, base, x.dtype)"
                  ".to(x.device)[positions]"))),
    # only the positions held in x's dtype, the product in float32 (rotary-embedding-torch's get_seq_pos)
    StyleMutant("rope_rotate_half_positions_in_input_dtype", "public/rope_hf_llama_rotate_half_pass", "long-context",
                "rope-angles-low-precision",
                (("    position_ids_expanded = position_ids[:, None, :].float()",
                  "    position_ids_expanded = position_ids[:, None, :].to(x.dtype).float()"),)),
    # the scale left out of the scores' own line, the line before the exp
    StyleMutant("attention_backward_fa2_scores_unscaled", "public/attention_backward_fa2_algorithm2_pass",
                "gradients", "backward-p-unscaled",
                (("            Sij = scale * Qi @ Kj.transpose(-1, -2)",
                  "            Sij = Qi @ Kj.transpose(-1, -2)"),)),
    # found by their values: dS without D, the queries' positions before the cache
    StyleMutant("attention_backward_fa2_no_delta", "public/attention_backward_fa2_algorithm2_pass", "gradients",
                "backward-no-delta", (("            dSij = Pij * (dPij - D[:, :, i:i + Br, None])",
                                       "            dSij = Pij * dPij"),)),
    StyleMutant("attention_backward_fa2_offset_sign", "public/attention_backward_fa2_algorithm2_pass", "causal",
                "causal-offset-sign",
                (("            rows = torch.arange(i, min(i + Br, N), device=q.device) + (M - N)",
                  "            rows = torch.arange(i, min(i + Br, N), device=q.device) - (M - N)"),)),
    # the queries at positions 0 … n − 1 (flash-attn's Triton kernel aligns causal masks top-left)
    StyleMutant("attention_backward_fa2_top_left", "public/attention_backward_fa2_algorithm2_pass", "causal",
                "causal-no-offset",
                (("            rows = torch.arange(i, min(i + Br, N), device=q.device) + (M - N)",
                  "            rows = torch.arange(i, min(i + Br, N), device=q.device)"),)),
    # blocks past the diagonal skipped, the element mask inside the diagonal blocks forgotten
    StyleMutant("attention_backward_fa2_diagonal_unmasked", "public/attention_backward_fa2_algorithm2_pass", "memory",
                "backward-causal-unmasked",
                (("                Pij = torch.where(cols[None, :] <= rows[:, None], Pij, torch.zeros_like(Pij))",
                  "                Pij = Pij"),)),
    # dK without the scale, where dQ's line holds the unscaled dQ before its own `* scale`: only dK's line
    StyleMutant("attention_backward_einsum_dk_unscaled", "variants/attention_backward_einsum", "gradients",
                "backward-scale-missing",
                (("        dk[:, :, start:start + step] = torch.einsum(\"bghij,bghid->bgjd\", ds, qg) * scale",
                  "        dk[:, :, start:start + step] = torch.einsum(\"bghij,bghid->bgjd\", ds, qg)"),)),
    StyleMutant("attention_backward_einsum_dv_not_transposed", "variants/attention_backward_einsum", "gradients",
                "backward-dv-not-transposed",
                (("        dv[:, :, start:start + step] = torch.einsum(\"bghij,bghid->bgjd\", p, dog)",
                  "        dv[:, :, start:start + step] = torch.einsum(\"bghji,bghid->bgjd\", p, dog)"),)),
    StyleMutant("attention_backward_unflatten_first_head", "public/attention_backward_fa2_algorithm2_pass", "gqa",
                "backward-gqa-not-summed",
                (("    dK = dK.unflatten(1, (G, H // G)).sum(2)", "    dK = dK.unflatten(1, (G, H // G))[:, :, 0]"),
                 ("    dV = dV.unflatten(1, (G, H // G)).sum(2)", "    dV = dV.unflatten(1, (G, H // G))[:, :, 0]"))),
    # lengths read on the host (.tolist()): no tensor op on the planted line, so no line
    StyleMutant("paged_decode_host_length_short", "public/paged_decode_vllm_reference_pass", "ragged",
                "paged-length-off-by-one",
                (("        seq_len = int(seq_lens_lst[i])", "        seq_len = int(seq_lens_lst[i]) - 1"),)),
    # FlashInfer's CSR: every sequence's pages taken from the first row of the table
    StyleMutant("paged_decode_csr_first_row", "public/paged_decode_flashinfer_csr_pass", "ragged",
                "paged-wrong-sequence",
                (("    kv_indices = torch.cat([block_table[i, : int(num_pages[i])] for i in range(len(seq_lens))])",
                  "    kv_indices = torch.cat([block_table[0, : int(num_pages[i])] for i in range(len(seq_lens))])"),)),
    # the last page read whole: its length was counted in to_csr, on a line without positions, so no line
    StyleMutant("paged_decode_csr_whole_last_page", "public/paged_decode_flashinfer_csr_pass", "ragged",
                "paged-tail-unmasked",
                (("        ki = torch.cat([k_pool[pages[:-1]].reshape(-1, num_kv_heads, head_dim), "
                  "k_pool[pages[-1], :last]], dim=0)",
                  "        ki = torch.cat([k_pool[pages[:-1]].reshape(-1, num_kv_heads, head_dim), "
                  "k_pool[pages[-1]]], dim=0)"),
                 ("        vi = torch.cat([v_pool[pages[:-1]].reshape(-1, num_kv_heads, head_dim), "
                  "v_pool[pages[-1], :last]], dim=0)",
                  "        vi = torch.cat([v_pool[pages[:-1]].reshape(-1, num_kv_heads, head_dim), "
                  "v_pool[pages[-1]]], dim=0)"))),
    # the new token's key masked out, on a check with a one-token sequence: it attends to no key (NaN)
    StyleMutant("paged_decode_index_select_single_token_masked", "variants/paged_decode_index_select", "exact-pages",
                "paged-length-off-by-one",
                (("    valid = torch.arange(slots, device=q.device)[None, :] < seq_lens[:, None]",
                  "    valid = torch.arange(slots, device=q.device)[None, :] < seq_lens[:, None] - 1"),)),
    # the mask keeps the sequence's whole last page: found by the keys it keeps per row
    StyleMutant("paged_decode_index_select_whole_pages", "variants/paged_decode_index_select", "ragged",
                "paged-tail-unmasked",
                (("    valid = torch.arange(slots, device=q.device)[None, :] < seq_lens[:, None]",
                  "    valid = torch.arange(slots, device=q.device)[None, :] < "
                  "-(-seq_lens[:, None] // page_size) * page_size"),)),
    # one stale slot kept (<=): the table's row is read before the mask's line, found by the keys it keeps
    StyleMutant("paged_decode_index_select_stale_slot", "variants/paged_decode_index_select", "ragged",
                "paged-length-off-by-one",
                (("    valid = torch.arange(slots, device=q.device)[None, :] < seq_lens[:, None]",
                  "    valid = torch.arange(slots, device=q.device)[None, :] <= seq_lens[:, None]"),)),
)


def write_style_mutants(folder: Path) -> list[Path]:
    paths = []
    for mutant in STYLE_MUTANTS:
        path = folder / f"{mutant.stem}.py"
        path.write_text(mutant.text())
        paths.append(path)
    return paths
