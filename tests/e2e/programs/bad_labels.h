// The device-side assert the e2e jobs provoke: PyTorch's nll_loss forward kernel (the simulator's stock one) over
// four labels of four classes, one of them 9. Holds the device buffers and the argument array a launch takes.
#pragma once

#include <cuda_runtime_api.h>

struct BadLabelsLoss {
  float* input = nullptr;
  float* loss = nullptr;
  float* weight_sum = nullptr;
  long* labels = nullptr;
  long nframe = 4, ndim = 4, classes = 4, ignore = -100;
  bool average = true;
  const float* no_weights = nullptr;
  void* args[10] = {&loss, &weight_sum, &input, &labels, &no_weights, &average, &nframe, &ndim, &classes, &ignore};

  BadLabelsLoss() {
    cudaMalloc(reinterpret_cast<void**>(&input), sizeof(float) * 16);
    cudaMalloc(reinterpret_cast<void**>(&loss), sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&weight_sum), sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&labels), sizeof(long) * 4);
    long bad[4] = {0, 1, 9, 2};
    cudaMemcpy(labels, bad, sizeof bad, cudaMemcpyHostToDevice);
  }
  // args points into this object.
  BadLabelsLoss(const BadLabelsLoss&) = delete;
  BadLabelsLoss& operator=(const BadLabelsLoss&) = delete;
};
