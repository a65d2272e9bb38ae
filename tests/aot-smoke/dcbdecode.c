// Decodes an RFC 9842 dcb body (FF 44 43 42, SHA-256, brotli stream) against a raw dictionary,
// with brotli 1.1's decoder from the Native AOT runtime pack: dcbdecode DICTIONARY BODY > OUT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef struct BrotliDecoderStateStruct BrotliDecoderState;
BrotliDecoderState* BrotliDecoderCreateInstance(void*, void*, void*);
int BrotliDecoderAttachDictionary(BrotliDecoderState*, int, size_t, const uint8_t*);
int BrotliDecoderDecompressStream(BrotliDecoderState*, size_t*, const uint8_t**, size_t*, uint8_t**, size_t*);
static unsigned char* slurp(const char* p, size_t* n){FILE*f=fopen(p,"rb");if(!f)exit(2);fseek(f,0,SEEK_END);*n=ftell(f);fseek(f,0,SEEK_SET);unsigned char*b=malloc(*n+1);if(fread(b,1,*n,f)!=*n)exit(2);fclose(f);return b;}
int main(int c, char** v){
  if(c!=3) return 2;
  size_t dn, bn; unsigned char* d=slurp(v[1],&dn); unsigned char* b=slurp(v[2],&bn);
  static const unsigned char magic[4]={0xFF,0x44,0x43,0x42};
  if(bn<36||memcmp(b,magic,4)){fprintf(stderr,"no dcb header\n");return 1;}
  BrotliDecoderState* s=BrotliDecoderCreateInstance(NULL,NULL,NULL);
  if(!BrotliDecoderAttachDictionary(s,0,dn,d)){fprintf(stderr,"attach failed\n");return 1;}
  size_t cap=64<<20, ai=bn-36, ao=cap; unsigned char* out=malloc(cap); const uint8_t* ni=b+36; uint8_t* no=out;
  int r=BrotliDecoderDecompressStream(s,&ai,&ni,&ao,&no,NULL);
  if(r!=1){fprintf(stderr,"decode failed (%d)\n",r);return 1;}
  fwrite(out,1,cap-ao,stdout); return 0;
}
