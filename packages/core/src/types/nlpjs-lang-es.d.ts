/** The part of @nlpjs/lang-es Skillhost uses (the package ships no types): its Snowball Spanish stemmer. */
declare module '@nlpjs/lang-es' {
  export class StemmerEs {
    stemWord(word: string): string;
  }
}
