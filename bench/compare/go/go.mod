// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
module wsched/bench/compare/go

go 1.19
