/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * image: ws_parallel_for over the rows of an image. Pass 1 paints a
 * gradient into a buffer, pass 2 blurs it (3x3 box filter) into a second
 * buffer; each pass is one parallel loop whose body gets a range of rows.
 * Rows are independent, so pieces may run on any worker in any order. The
 * result is compared, pixel by pixel, with the same passes run serially.
 *
 * Usage: image [WIDTH HEIGHT]   (default 1024 768)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wsched.h>

struct image {
  int w, h;
  uint8_t *px; /* w*h grey levels, row after row */
};

/* What both loops share: read-only during the loop except for the rows
   each piece owns. */
struct pass {
  const struct image *src; /* blur: the input */
  struct image *dst; /* the rows written */
};

static uint8_t gradient_at(int x, int y, int w, int h)
{
  /* a diagonal ramp with a ripple, so that the blur has something to do */
  return (uint8_t)((255 * x / (w - 1) + 255 * y / (h - 1)) / 2 + ((x ^ y) & 15));
}

/* Loop body, pass 1: rows [y0, y1) of the gradient. */
static int paint_rows(void *ctx, int64_t y0, int64_t y1)
{
  struct image *im = ((struct pass *)ctx)->dst;
  for (int64_t y = y0; y < y1; y++)
    for (int x = 0; x < im->w; x++)
      im->px[y * im->w + x] = gradient_at(x, (int)y, im->w, im->h);
  return 0;
}

/* Loop body, pass 2: rows [y0, y1) of the 3x3 box blur (edges clamped). */
static int blur_rows(void *ctx, int64_t y0, int64_t y1)
{
  const struct pass *p = ctx;
  const struct image *s = p->src;
  for (int64_t y = y0; y < y1; y++)
    for (int x = 0; x < s->w; x++) {
      int sum = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          int64_t yy = y + dy < 0 ? 0 : y + dy >= s->h ? s->h - 1 : y + dy;
          int xx = x + dx < 0 ? 0 : x + dx >= s->w ? s->w - 1 : x + dx;
          sum += s->px[yy * s->w + xx];
        }
      p->dst->px[y * s->w + x] = (uint8_t)(sum / 9);
    }
  return 0;
}

static int alloc_image(struct image *im, int w, int h)
{
  im->w = w;
  im->h = h;
  im->px = malloc((size_t)w * (size_t)h);
  return im->px != NULL;
}

int main(int argc, char **argv)
{
  int w = argc > 2 ? atoi(argv[1]) : 1024, h = argc > 2 ? atoi(argv[2]) : 768;
  if (w < 2 || h < 2 || w > 16384 || h > 16384) {
    fprintf(stderr, "usage: image [WIDTH HEIGHT], each in 2..16384\n");
    return 2;
  }
  struct image grad, blur, grad_ref, blur_ref;
  if (!alloc_image(&grad, w, h) || !alloc_image(&blur, w, h) || !alloc_image(&grad_ref, w, h) ||
      !alloc_image(&blur_ref, w, h))
    return 1;

  ws_pool_t *pool;
  if (ws_pool_create(&pool, NULL) != 0)
    return 1;
  /* From the main thread, each ws_parallel_for is submitted as one root task
     and waited for. grain 0 lets wsched choose the piece size (about 256
     pieces per worker); a loop of cheap iterations would pass a larger
     grain. */
  struct pass paint = {NULL, &grad}, smooth = {&grad, &blur};
  int rc = ws_parallel_for(pool, 0, h, 0, paint_rows, &paint);
  if (rc == 0)
    rc = ws_parallel_for(pool, 0, h, 0, blur_rows, &smooth);
  ws_pool_destroy(pool);

  /* The same two passes, serially, as one piece each: the reference. */
  struct pass paint_ref = {NULL, &grad_ref}, smooth_ref = {&grad_ref, &blur_ref};
  paint_rows(&paint_ref, 0, h);
  blur_rows(&smooth_ref, 0, h);
  int same = rc == 0 && memcmp(blur.px, blur_ref.px, (size_t)w * (size_t)h) == 0;

  unsigned long checksum = 0;
  for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
    checksum = checksum * 31 + blur.px[i];
  printf("image: %dx%d gradient blurred, checksum %lu: %s\n", w, h, checksum,
         same ? "ok" : "WRONG");
  free(grad.px);
  free(blur.px);
  free(grad_ref.px);
  free(blur_ref.px);
  return same ? 0 : 1;
}
